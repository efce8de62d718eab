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
package ai.djl.distributed.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void aPrefixNoKeyCanHoldIsRefusedAtOnce() {
        // as PyTorch's constructor refuses it, rather than every later call naming a joined key
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> new PrefixStore("p\uD800", base));
        assertTrue(
                e.getMessage().startsWith("prefix: 'p\uD800' holds an unpaired"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> PrefixStore.owning("\uDC00", base));
        new PrefixStore("p\uD83D\uDE00", base).set("k", "v"); // a pair is one code point
        assertEquals("v", base.getString("p\uD83D\uDE00/k"));
    }
}
