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
 * Stores: the key-value rendezvous through which the ranks of a job meet, compatible with PyTorch's
 * c10d stores.
 *
 * <p>{@link ai.djl.distributed.store.Store} mirrors {@code torch.distributed.Store}. {@link
 * ai.djl.distributed.store.HashStore} lives in one process, {@link
 * ai.djl.distributed.store.PrefixStore} namespaces another store, {@link
 * ai.djl.distributed.store.FileStore} shares PyTorch's on-disk format and locking, and {@code
 * ai.djl.distributed.store.tcp.TcpStore} speaks PyTorch's TCPStore wire protocol, so Java and
 * Python ranks can meet in one store.
 */
package ai.djl.distributed.store;
