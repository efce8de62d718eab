package ai.djl.distributed.store;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

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

    @Test
    void counterErrorNamesKeyAndValue() {
        store.set("text", "not a number");
        StoreException e = assertThrows(StoreException.class, () -> store.add("text", 1));
        assertTrue(e.getMessage().contains("'text'"), e.getMessage());
        assertTrue(e.getMessage().contains("'not a number'"), e.getMessage());
    }
}
