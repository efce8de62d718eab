package ai.djl.distributed.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import java.util.List;

/** The store contract on a {@link HashStore} seen through nested {@link PrefixStore}s. */
class PrefixHashStoreTest extends StoreContractTest {

    private HashStore base;

    /** {@inheritDoc} */
    @Override
    protected Store createStore() {
        base = new HashStore();
        return new PrefixStore("outer", new PrefixStore("inner", base));
    }

    /** {@inheritDoc} */
    @Override
    protected boolean hasQueues() {
        return true;
    }

    @Test
    void keysAreJoinedAsPyTorchJoinsThem() {
        store.set("k", "v");
        assertEquals("v", base.getString("inner/outer/k"));
        store.add("n", 2);
        assertEquals("2", base.getString("inner/outer/n"));
        store.queuePush("q", new byte[] {1});
        assertEquals(1, base.queueLength("inner/outer/q"));
        assertEquals(List.of(true), List.of(base.check(List.of("inner/outer/k"))));
    }

    @Test
    void underlyingStoresAreExposed() {
        PrefixStore prefix = (PrefixStore) store;
        assertSame(base, prefix.getUnderlyingNonPrefixStore());
        assertEquals("outer", prefix.getPrefix());
        assertThrows(IllegalArgumentException.class, () -> new PrefixStore("p", null));
        assertThrows(IllegalArgumentException.class, () -> new PrefixStore(null, base));
    }
}
