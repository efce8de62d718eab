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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.util.List;

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
    void emptyCounterCountsAsZeroAsInPyTorch() {
        // torch 2.6: HashStore().set("e", b""); add("e", 4) returns 4
        store.set("e", new byte[0]);
        assertEquals(4, store.add("e", 4));
        assertEquals("4", store.getString("e"));
    }

    @Test
    void counterErrorNamesKeyAndValue() {
        store.set("text", "not a number");
        StoreException e = assertThrows(StoreException.class, () -> store.add("text", 1));
        assertTrue(e.getMessage().contains("'text'"), e.getMessage());
        assertTrue(e.getMessage().contains("'not a number'"), e.getMessage());
    }

    @Test
    void counterOverflowIsRefusedAndLeavesTheValue() {
        assertEquals(Long.MAX_VALUE, store.add("c", Long.MAX_VALUE));
        StoreException up = assertThrows(StoreException.class, () -> store.add("c", 1));
        for (String part : List.of(store.toString(), "'c'", "9223372036854775807", " 1 ")) {
            assertTrue(up.getMessage().contains(part), up.getMessage() + " lacks " + part);
        }
        assertEquals("9223372036854775807", store.getString("c"));

        assertEquals(Long.MIN_VALUE, store.add("d", Long.MIN_VALUE));
        StoreException down = assertThrows(StoreException.class, () -> store.add("d", -1));
        assertTrue(down.getMessage().contains("-9223372036854775808"), down.getMessage());
        assertEquals("-9223372036854775808", store.getString("d"));
        assertEquals(9223372036854775806L, store.add("c", -1), "a counter in range still adds");
    }
}
