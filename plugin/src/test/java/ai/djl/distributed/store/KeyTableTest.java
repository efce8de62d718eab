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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * {@link KeyTable}'s values, appended-to ones above all, against a plain map whose append joins two
 * arrays: the table keeps appended values in buffers with room to spare, and every other operation
 * must see exactly the bytes appended.
 */
class KeyTableTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void appendsReadBackExactlyBetweenEveryOtherOperation() {
        Random random = new Random(20261129);
        for (int trial = 0; trial < 40; ++trial) {
            KeyTable table = new KeyTable("test");
            Map<String, byte[]> model = new HashMap<>();
            String[] keys = {"a", "b", "c"};
            for (int step = 0; step < 400; ++step) {
                String key = keys[random.nextInt(keys.length)];
                String at = "trial " + trial + " step " + step + " key " + key;
                switch (random.nextInt(10)) {
                    case 0:
                    case 1:
                    case 2:
                    case 3: // appends dominate, so buffers grow over many steps
                        byte[] bytes = new byte[random.nextInt(40)];
                        random.nextBytes(bytes);
                        table.append(key, bytes.clone());
                        byte[] old = model.get(key);
                        byte[] joined = bytes;
                        if (old != null) {
                            joined = Arrays.copyOf(old, old.length + bytes.length);
                            System.arraycopy(bytes, 0, joined, old.length, bytes.length);
                        }
                        model.put(key, joined);
                        break;
                    case 4:
                        assertArrayEquals(model.get(key), table.get(key), at);
                        break;
                    case 5:
                        byte[] value = b("v" + step);
                        table.set(key, value);
                        model.put(key, value);
                        break;
                    case 6:
                        assertEquals(model.remove(key) != null, table.delete(key), at);
                        break;
                    case 7:
                        assertEquals(model.containsKey(key), table.hasValue(key), at);
                        assertEquals(model.containsKey(key), table.exists(key), at);
                        assertEquals(model.size(), table.size(), at);
                        assertEquals(model.keySet(), new HashSet<>(table.keys()), at);
                        break;
                    case 8: // compare-and-set against the value the model holds
                        byte[] expected = model.getOrDefault(key, new byte[0]);
                        byte[] desired = b("cas" + step);
                        assertSame(desired, table.compareSet(key, expected.clone(), desired), at);
                        model.put(key, desired);
                        break;
                    default: // a counter: replaces whatever was there
                        table.set(key, b("41"));
                        table.append(key, b("0"));
                        assertEquals(411, table.add(key, 1), at);
                        model.put(key, b("411"));
                        break;
                }
            }
            for (String key : keys) {
                assertArrayEquals(model.get(key), table.get(key), "trial " + trial + " " + key);
            }
        }
    }

    @Test
    void aReturnedValueIsNeverWrittenAgain() {
        KeyTable table = new KeyTable("test");
        table.append("log", b("ab"));
        table.append("log", b("cd"));
        table.append("log", b("ef"));
        byte[] first = table.get("log");
        assertArrayEquals(b("abcdef"), first);
        assertSame(first, table.get("log"), "a value read twice without a write is the same array");
        table.append("log", b("gh"));
        table.append("log", b("ij"));
        assertArrayEquals(b("abcdef"), first, "appends after a read must not reach its array");
        byte[] second = table.get("log");
        assertArrayEquals(b("abcdefghij"), second);
        assertEquals(10, second.length, "the value read is its exact length, not the buffer's");
    }

    @Test
    void appendedValuesAreSeenByCountersCompareSetAndDelete() {
        KeyTable table = new KeyTable("test");
        table.append("n", b("1"));
        table.append("n", b("2"));
        table.append("n", b("3"));
        assertEquals(124, table.add("n", 1));
        assertArrayEquals(b("124"), table.get("n"));

        table.append("s", b("x"));
        table.append("s", b("y"));
        byte[] desired = b("z");
        assertArrayEquals(b("xy"), table.compareSet("s", b("x"), desired), "a mismatch returns it");
        assertSame(desired, table.compareSet("s", b("xy"), desired));

        table.append("d", b("1"));
        table.append("d", b("2"));
        assertTrue(table.exists("d"));
        assertTrue(table.delete("d"));
        assertFalse(table.exists("d"));
        assertNull(table.get("d"));
        assertFalse(table.delete("d"));
        table.append("d", b("3"));
        assertArrayEquals(b("3"), table.get("d"), "a deleted key's buffer must not come back");
    }

    @Test
    void appendPastTheLimitLeavesTheValueAsItWas() {
        KeyTable table = new KeyTable("test");
        table.append("k", b("0123"), 10);
        table.append("k", b("45678"), 10);
        StoreException e =
                assertThrows(StoreException.class, () -> table.append("k", b("9ab"), 10));
        assertTrue(e.getMessage().contains("'k'") && e.getMessage().contains("12"), e.getMessage());
        assertArrayEquals(b("012345678"), table.get("k"));
        table.append("k", b("9"), 10); // exactly the limit
        assertArrayEquals(b("0123456789"), table.get("k"));
    }

    @Test
    void manyAppendsToOneKeyKeepEveryByteInOrder() {
        KeyTable table = new KeyTable("test");
        List<Byte> expected = new ArrayList<>();
        for (int i = 0; i < 5000; ++i) {
            byte[] chunk = new byte[1 + i % 7];
            Arrays.fill(chunk, (byte) i);
            table.append("log", chunk);
            for (byte x : chunk) {
                expected.add(x);
            }
        }
        byte[] value = table.get("log");
        assertEquals(expected.size(), value.length);
        for (int i = 0; i < value.length; ++i) {
            assertEquals((byte) expected.get(i), value[i], "byte " + i);
        }
    }
}
