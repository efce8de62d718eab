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
package ai.djl.distributed.launch;

import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.time.Duration;

/**
 * Serving the agent store and connecting to it, with messages that say which option names the
 * address. The server listens on loopback when its address is a loopback one, else on every
 * interface, as torchrun's agent store does.
 */
final class AgentStores {

    private AgentStores() {}

    /**
     * Connects a client of the agent store, retrying until the timeout.
     *
     * @param host the store's host
     * @param port the store's port
     * @param timeout how long to try, and the timeout of its calls
     * @return the client
     * @throws LaunchException if the store cannot be reached
     */
    static TcpStore connect(String host, int port, Duration timeout) {
        try {
            return TcpStore.builder().setHost(host).setPort(port).optTimeout(timeout).build();
        } catch (StoreException e) {
            throw new LaunchException(
                    "cannot reach the agent store at "
                            + new Endpoint(host, port)
                            + " within "
                            + timeout.toSeconds()
                            + " s (expected: node 0's launcher serving there, as"
                            + " --master-addr/--master-port or --rdzv-endpoint say): "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * Serves the agent store.
     *
     * @param host the address to listen on
     * @param port the port; 0 picks a free one
     * @param why why this launcher serves, for the message
     * @return the server
     * @throws LaunchException if the port cannot be bound
     */
    static TcpStoreServer serve(String host, int port, String why) {
        try {
            return TcpStoreServer.builder().optHost(host).optPort(port).optIoThreads(2).build();
        } catch (StoreException e) {
            throw new LaunchException(
                    "cannot serve the agent store on "
                            + new Endpoint(host, port)
                            + why
                            + " (expected: a free --master-port; 0 picks one on a single node): "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * Serves the store of a {@code --rdzv-endpoint} if that endpoint is on this host and its port
     * is free: the first launcher there to bind it serves; a failed bind means another launcher (or
     * a {@code djl-dist store-server}) serves already.
     *
     * @param ep the endpoint
     * @return the server, or {@code null} if this launcher is to be a client
     */
    static TcpStoreServer tryServe(Endpoint ep) {
        if (!isLocal(ep.host())) {
            return null;
        }
        try {
            return TcpStoreServer.builder()
                    .optHost(serverAddress(ep.host()))
                    .optPort(ep.port())
                    .optIoThreads(2)
                    .build();
        } catch (StoreException e) {
            return null;
        }
    }

    /**
     * Returns the host this launcher's own client uses for a store it serves for an endpoint.
     *
     * @param host the endpoint's host
     * @return the host itself if loopback, else {@code 127.0.0.1}
     */
    static String clientHost(String host) {
        return serverAddress(host).equals("0.0.0.0") ? "127.0.0.1" : host;
    }

    // A loopback endpoint is served on loopback only; any other on every interface, as torchrun's.
    private static String serverAddress(String host) {
        try {
            return InetAddress.getByName(host).isLoopbackAddress() ? host : "0.0.0.0";
        } catch (UnknownHostException e) {
            return "0.0.0.0";
        }
    }

    private static boolean isLocal(String host) {
        try {
            for (InetAddress a : InetAddress.getAllByName(host)) {
                if (a.isLoopbackAddress()
                        || a.isAnyLocalAddress()
                        || NetworkInterface.getByInetAddress(a) != null) {
                    return true;
                }
            }
        } catch (UnknownHostException | SocketException e) {
            return false;
        }
        return false;
    }
}
