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
 * Fully sharded data parallelism ({@link ai.djl.distributed.fsdp.FullyShardedDataParallel}), as
 * PyTorch's FSDP: parameters, gradients and optimizer state sharded across ranks, units gathered
 * one at a time by a staged forward and backward pass, {@link
 * ai.djl.distributed.fsdp.ShardingStrategy sharding strategies}, {@link
 * ai.djl.distributed.fsdp.WrapPolicy wrap policies} and {@link
 * ai.djl.distributed.fsdp.FsdpCheckpoint checkpoints}.
 *
 * <p>It builds on the data-parallel core ({@code ai.djl.distributed.parallel}), the staged form of
 * models ({@code ai.djl.distributed.staged}) and the process groups.
 */
package ai.djl.distributed.fsdp;
