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
 * A model's forward pass as a sequence of stages ({@link ai.djl.distributed.staged.Stage}, {@link
 * ai.djl.distributed.staged.StagedBlock}, {@link ai.djl.distributed.staged.Stages}): what fully
 * sharded data parallelism runs one unit at a time. It depends on DJL alone, so that a model can
 * offer a staged form without depending on anything distributed.
 */
package ai.djl.distributed.staged;
