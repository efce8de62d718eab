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
 * The backend SPI under process groups: {@link ai.djl.distributed.backend.Backend}, one method per
 * collective, a batch of sends and receives ({@link ai.djl.distributed.backend.PeerTransfer}) and a
 * sub-group's split, found through {@link ai.djl.distributed.backend.BackendProvider}. Helpers
 * backends share: {@link ai.djl.distributed.backend.FutureWork} (a {@link ai.djl.distributed.Work}
 * over a future), {@link ai.djl.distributed.backend.AbortNotices} (why a rank aborted, told through
 * the store), {@link ai.djl.distributed.backend.CallerWaits} (a blocking caller's hint) and {@link
 * ai.djl.distributed.backend.Waits} (bounded waits that an interrupt does not cut short). A backend
 * reports a dead, mismatched or late peer with {@link ai.djl.distributed.CommunicationException}.
 */
package ai.djl.distributed.backend;
