/*
 * Copyright 2026 The DJL Distributed Authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 * in compliance with the License. You may obtain a copy of the License at
 *
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the License
 * is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 * or implied. See the License for the specific language governing permissions and limitations under
 * the License.
 */
/**
 * Text for the transformer: the Europarl corpus with its fixed train/validation split, tokenizers
 * (byte-level and byte-pair encoding, saved beside a model), windows of tokens as a DJL {@link
 * ai.djl.training.dataset.RandomAccessDataset}, and the unigram baseline a language model must
 * beat.
 */
package ai.djl.distributed.transformer.data;
