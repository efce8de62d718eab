package ai.djl.distributed.interop;

import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreContractTest;
import ai.djl.distributed.store.tcp.TcpStore;

import java.time.Duration;

/**
 * The whole store contract run by the Java client against PyTorch 2.6's own TCPStore server (the
 * legacy one: no queues), a fresh server for every case.
 */
class PythonServerContractTest extends StoreContractTest {

    private static final String SERVER =
            """
            import datetime, time
            import torch.distributed as dist
            s = dist.TCPStore("127.0.0.1", 0, is_master=True, use_libuv=False,
                              wait_for_workers=False, timeout=datetime.timedelta(seconds=120))
            print("PORT", s.port, flush=True)
            time.sleep(600)
            """;

    private PythonPeer server;
    private long baseline;

    /** {@inheritDoc} */
    @Override
    protected Store createStore() throws Exception {
        server = PythonPeer.start(SERVER);
        int port = Integer.parseInt(server.awaitLine("PORT", Duration.ofSeconds(60)));
        TcpStore store =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(port)
                        .optTimeout(Duration.ofSeconds(30))
                        .build();
        baseline = store.numKeys();
        return store;
    }

    /** {@inheritDoc} */
    @Override
    protected Store connectAgain(Store store) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(((TcpStore) store).getPort())
                .optTimeout(Duration.ofSeconds(30))
                .build();
    }

    /** {@inheritDoc} */
    @Override
    protected long internalKeys() {
        return baseline;
    }

    /** {@inheritDoc} */
    @Override
    protected void cleanUp() {
        server.close();
    }
}
