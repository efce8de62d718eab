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
 * The data-parallel core that DDP and FSDP share: {@link
 * ai.djl.distributed.parallel.DistributedSampler} (each rank's share of a dataset), {@link
 * ai.djl.distributed.parallel.ModelSync} (the start-up check and broadcast from rank 0), {@link
 * ai.djl.distributed.parallel.RecordingParameterStore} (which parameters a forward pass uses, in
 * which order), {@link ai.djl.distributed.parallel.RankAverages} (evaluators and loss averaged over
 * the ranks), {@link ai.djl.distributed.parallel.RankZeroListener} (listeners that run on rank 0
 * only), {@link ai.djl.distributed.parallel.FlatBuffer} (arrays packed into one flat array, on any
 * device), {@link ai.djl.distributed.parallel.InPlace} (in-place copies on any device) and {@link
 * ai.djl.distributed.parallel.OptimizerState} (an optimizer's state by parameter name).
 *
 * <p>It builds on the process groups ({@code ai.djl.distributed.pg}) and never on the trainers that
 * use it.
 */
package ai.djl.distributed.parallel;
