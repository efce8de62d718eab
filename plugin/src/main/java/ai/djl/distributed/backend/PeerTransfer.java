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
package ai.djl.distributed.backend;

import ai.djl.ndarray.NDArray;

/**
 * One send or receive of a batch handed to {@link Backend#sendRecvBatch}: the process group's
 * {@code P2POp}, checked, at the backend's layer.
 *
 * @param send whether it sends (else it receives)
 * @param array the data, or where it goes
 * @param peer the other rank (the group's numbering)
 * @param tag pairs a send with a receive (backends that pair by order alone, as NCCL, ignore it)
 */
public record PeerTransfer(boolean send, NDArray array, int peer, int tag) {}
