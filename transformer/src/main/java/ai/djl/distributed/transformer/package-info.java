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
 * A GPT-style decoder-only transformer as DJL blocks, on DJL's PyTorch engine.
 *
 * <p>{@link ai.djl.distributed.transformer.GptConfig} gives the shape (presets {@code tiny} and
 * {@code mini}); {@link ai.djl.distributed.transformer.GptModel} is the model (embeddings, {@link
 * ai.djl.distributed.transformer.GptBlock}s of {@link
 * ai.djl.distributed.transformer.CausalSelfAttention} and {@link
 * ai.djl.distributed.transformer.Mlp}, a tied head), trained with {@link
 * ai.djl.distributed.transformer.CausalLmLoss} through DJL's {@code Trainer}; {@link
 * ai.djl.distributed.transformer.GptGenerator} samples text with a {@link
 * ai.djl.distributed.transformer.KvCache}; {@link ai.djl.distributed.transformer.GptCheckpoint}
 * saves and loads a model with its tokenizer.
 */
package ai.djl.distributed.transformer;
