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
 * {@link ai.djl.distributed.store.tcp.TcpStore}: a client and a Netty server speaking PyTorch's
 * TCPStore wire protocol (PyTorch 2.2 and later), so Java and Python ranks can share one store.
 *
 * <p>The layout follows a Netty codec: {@link ai.djl.distributed.store.tcp.StoreOpcode} owns each
 * query's wire byte and shape; {@link ai.djl.distributed.store.tcp.StoreRequestEncoder} and {@link
 * ai.djl.distributed.store.tcp.StoreRequestDecoder} turn requests into bytes and back; the server
 * side is {@link ai.djl.distributed.store.tcp.TcpStoreServer}, its per-connection handlers (a fast
 * path that serves the common queries straight from the read buffer when they arrive whole, the
 * decoder for everything else) and the shared key state; the client side is a connection that
 * matches each reply to its query. {@link ai.djl.distributed.store.tcp.NettyTransport} is the one
 * place that picks io_uring, epoll or NIO. Two optional guards, extensions PyTorch's clients cannot
 * speak, stand before the server's handlers as gates ({@code ConnectionGate}): TLS ({@link
 * ai.djl.distributed.store.tcp.StoreTls}) and then the store secret's handshake ({@code
 * StoreAuth}).
 */
package ai.djl.distributed.store.tcp;
