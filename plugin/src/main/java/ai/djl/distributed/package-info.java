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
 * DJL Distributed: torch.distributed for DJL.
 *
 * <p>This package holds the vocabulary every layer shares, below all of them: the unchecked root
 * exception {@link ai.djl.distributed.DistributedException} and its subclasses ({@link
 * ai.djl.distributed.CommunicationException} for a failed collective, {@link
 * ai.djl.distributed.NotSupportedException}), the reductions ({@link ai.djl.distributed.ReduceOp})
 * and the handle of an operation under way ({@link ai.djl.distributed.Work}). The layers above it,
 * each in its own packages and importing only downwards: stores ({@code store}, {@code store.tcp}),
 * rendezvous ({@code rendezvous}), backends ({@code backend}, {@code backend.cpu}), process groups
 * ({@code pg}), then DDP and FSDP and the examples; the launcher ({@code launch}) and the command
 * line ({@code cli}) stand beside process groups.
 */
package ai.djl.distributed;
