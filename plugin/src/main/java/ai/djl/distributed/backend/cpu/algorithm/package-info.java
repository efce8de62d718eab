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
 * Collective algorithms, one class per collective as in gloo: each sees only a {@link
 * ai.djl.distributed.backend.cpu.algorithm.CollectiveContext} (rank, size, send/receive by index,
 * the board and peer memory where the group has them, deadline, reduction, scratch), never the
 * transport's mechanism.
 */
package ai.djl.distributed.backend.cpu.algorithm;
