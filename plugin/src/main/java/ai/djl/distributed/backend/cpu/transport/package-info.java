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
 * Moving bytes between ranks, ignorant of collectives: {@link
 * ai.djl.distributed.backend.cpu.transport.Transport} (posted sends and receives matched by slot,
 * every frame signed with its operation so that mismatches are caught) with its implementations:
 * TCP (a full mesh driven by one selector thread), shared-memory rings, and both combined on one
 * host ({@link ai.djl.distributed.backend.cpu.transport.HybridTransport}). Between ranks of one
 * host two more mechanisms serve the algorithms directly: the shared-memory board for small
 * collectives ({@link ai.djl.distributed.backend.cpu.transport.ShmBoard}) and copies between the
 * ranks' own memory ({@link ai.djl.distributed.backend.cpu.transport.PeerMemory}).
 */
package ai.djl.distributed.backend.cpu.transport;
