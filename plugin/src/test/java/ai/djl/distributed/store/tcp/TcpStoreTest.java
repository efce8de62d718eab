package ai.djl.distributed.store.tcp;

import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreContractTest;

import java.time.Duration;

/** The store contract on {@link TcpStore}: a serving instance, and further clients of it. */
public class TcpStoreTest extends StoreContractTest {

    /** {@inheritDoc} */
    @Override
    protected Store createStore() {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(0)
                .optServer(true)
                .optWorldSize(1)
                .optTimeout(Duration.ofSeconds(30))
                .build();
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
        return 1; // init/
    }

    /** {@inheritDoc} */
    @Override
    protected boolean hasQueues() {
        return true;
    }
}
