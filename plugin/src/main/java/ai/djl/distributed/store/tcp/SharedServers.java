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

    static synchronized TcpStoreServer acquire(
            String host, int port, boolean multiTenant, int ioThreads) {
        if (multiTenant && port != 0) {
            TcpStoreServer live = BY_PORT.get(port);
            if (live != null && !live.isClosed()) {
                USERS.merge(live, 1, Integer::sum);
                return live;
            }
        }
        TcpStoreServer server =
                TcpStoreServer.builder()
                        .optHost(host)
                        .optPort(port)
                        .optIoThreads(ioThreads)
                        .build();
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
