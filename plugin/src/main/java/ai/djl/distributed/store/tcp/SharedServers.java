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
package ai.djl.distributed.store.tcp;

import java.util.HashMap;
import java.util.Map;

/**
 * The servers started by {@link TcpStore} instances of this JVM, shared by port when they are
 * multi-tenant and closed when their last instance closes.
 */
final class SharedServers {

    private static final Map<Integer, TcpStoreServer> BY_PORT = new HashMap<>();
    private static final Map<TcpStoreServer, Integer> USERS = new HashMap<>();

    private SharedServers() {}

    /**
     * Returns a live server of this JVM on the port if both are multi-tenant, else starts one.
     *
     * @param host the address to listen on
     * @param port the port, 0 for a free one
     * @param multiTenant whether to share the server with later instances on the same port
     * @param options the settings of a server to start (its host and port are set here); a shared
     *     server keeps the settings it started with
     * @return the server; {@link #release} it once done
     */
    static synchronized TcpStoreServer acquire(
            String host, int port, boolean multiTenant, TcpStoreServer.Builder options) {
        if (multiTenant && port != 0) {
            TcpStoreServer live = BY_PORT.get(port);
            if (live != null && !live.isClosed()) {
                USERS.merge(live, 1, Integer::sum);
                return live;
            }
        }
        TcpStoreServer server = options.optHost(host).optPort(port).build();
        USERS.put(server, 1);
        if (multiTenant) {
            BY_PORT.put(server.getPort(), server);
        }
        return server;
    }

    // Closed under the lock, so a multi-tenant acquire of the same port never races the unbind.
    static synchronized void release(TcpStoreServer server) {
        int left = USERS.merge(server, -1, Integer::sum);
        if (left > 0) {
            return;
        }
        USERS.remove(server);
        BY_PORT.remove(server.getPort(), server);
        server.close();
    }
}
