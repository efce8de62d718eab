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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * The defaults {@link Store} gives a third-party store that implements only its abstract methods
 * (here over a {@link HashStore}): every store of this library overrides them.
 */
@Timeout(30)
class StoreDefaultsTest {

    /** The abstract methods only; {@code afterFirstRead} runs once, after the first read of k. */
    private static final class Minimal implements Store {
        final HashStore inner = new HashStore();
        Runnable afterFirstRead = () -> {};

        private void read() {
            Runnable r = afterFirstRead;
            afterFirstRead = () -> {};
            r.run(); // what another rank does right then
        }

        @Override
        public void set(String key, byte[] value) {
            inner.set(key, value);
        }

        @Override
        public byte[] get(String key) {
            byte[] v = inner.get(key);
            read();
            return v;
        }

        @Override
        public long add(String key, long delta) {
            return inner.add(key, delta);
        }

        @Override
        public byte[] compareSet(String key, byte[] expected, byte[] desired) {
            byte[] v = inner.compareSet(key, expected, desired);
            read();
            return v;
        }

        @Override
        public boolean deleteKey(String key) {
            return inner.deleteKey(key);
        }

        @Override
        public boolean check(List<String> keys) {
            boolean v = inner.check(keys);
            read();
            return v;
        }

        @Override
        public void waitFor(List<String> keys, Duration timeout) {
            inner.waitFor(keys, timeout);
        }

        @Override
        public long numKeys() {
            return inner.numKeys();
        }

        @Override
        public Duration getTimeout() {
            return inner.getTimeout();
        }

        @Override
        public void setTimeout(Duration timeout) {
            inner.setTimeout(timeout);
        }

        @Override
        public void close() {
            inner.close();
        }
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void appendCreatesAMissingKeyAndAppendsToAPresentOne() {
        try (Minimal s = new Minimal()) {
            s.append("k", bytes("ab"));
            assertEquals("ab", s.getString("k"));
            s.append("k", bytes("cd"));
            assertEquals("abcd", s.getString("k"));
        }
    }

    @Test
    void appendingTheBytesAValueAlreadyHoldsDoublesThem() {
        // seeded with "" as PyTorch's fallback is, the loop would stop at once: "x" == "x"
        try (Minimal s = new Minimal()) {
            s.set("k", "x");
            s.append("k", bytes("x"));
            assertEquals("xx", s.getString("k"));
        }
    }

    @Test
    void appendOnAKeyDeletedAsItIsReadCreatesItWithoutWaiting() {
        try (Minimal s = new Minimal()) {
            s.setTimeout(Duration.ofSeconds(20));
            s.set("k", "a");
            s.afterFirstRead = () -> s.inner.deleteKey("k"); // another rank deletes k
            long start = System.nanoTime();
            s.append("k", bytes("x"));
            assertEquals("x", s.inner.getString("k"), "created, as for a missing key");
            assertTrue(
                    System.nanoTime() - start < Duration.ofSeconds(5).toNanos(),
                    "append waited for the deleted key");
        }
    }

    @Test
    void multiGetAndMultiSetGoKeyByKey() {
        try (Minimal s = new Minimal()) {
            s.multiSet(List.of("a", "b"), List.of(bytes("1"), bytes("22")));
            List<byte[]> values = s.multiGet(List.of("b", "a"));
            assertArrayEquals(bytes("22"), values.get(0));
            assertArrayEquals(bytes("1"), values.get(1));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> s.multiSet(List.of("a"), List.of(bytes("1"), bytes("2"))));
        }
    }
}
