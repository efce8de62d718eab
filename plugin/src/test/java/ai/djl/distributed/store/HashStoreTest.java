package ai.djl.distributed.store;

/** The store contract on {@link HashStore}. */
class HashStoreTest extends StoreContractTest {

    /** {@inheritDoc} */
    @Override
    protected Store createStore() {
        return new HashStore();
    }

    /** {@inheritDoc} */
    @Override
    protected boolean hasQueues() {
        return true;
    }
}
