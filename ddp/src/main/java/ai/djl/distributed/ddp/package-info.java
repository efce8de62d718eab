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
 * Distributed data-parallel training for DJL, as PyTorch's {@code DistributedDataParallel}: {@link
 * ai.djl.distributed.ddp.DistributedDataParallel} (a {@code Trainer} that averages gradients over
 * the ranks of a process group in buckets), {@link ai.djl.distributed.ddp.BucketAssignment}, {@link
 * ai.djl.distributed.ddp.CommHook} and {@link ai.djl.distributed.ddp.CommHooks} (how buckets go on
 * the wire) and {@link ai.djl.distributed.ddp.DdpCheckpoint} (saving and resuming). What it shares
 * with FSDP (the sampler, model sync, rank-averaged metrics, rank-0 listeners, flat buffers) is in
 * {@code ai.djl.distributed.parallel}.
 */
package ai.djl.distributed.ddp;
