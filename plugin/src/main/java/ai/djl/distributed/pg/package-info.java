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
 * Process groups and collectives on DJL NDArrays, as {@code torch.distributed}: {@link
 * ai.djl.distributed.pg.ProcessGroup} (the collectives, synchronous and asynchronous), {@link
 * ai.djl.distributed.pg.ProcessGroups} and {@link ai.djl.distributed.pg.Distributed} (creating the
 * world), {@link ai.djl.distributed.pg.DeviceMesh}, and the types they share with the layers below:
 * {@link ai.djl.distributed.ReduceOp}, {@link ai.djl.distributed.Work}.
 */
package ai.djl.distributed.pg;
