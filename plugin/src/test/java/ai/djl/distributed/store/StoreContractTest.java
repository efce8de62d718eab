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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.NotSupportedException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The contract every {@link Store} keeps, run against each implementation and against each wrapped
 * in a {@link PrefixStore}. Cases follow PyTorch's {@code test_store.py}; expected values are
 * written out by hand, not computed by a store.
 */
@Timeout(60)
public abstract class StoreContractTest {

    /** A short wait for cases that expect a timeout. */
    protected static final Duration SHORT = Duration.ofMillis(300);

    protected Store store;
    private final List<Store> extra = new ArrayList<>();

    /**
     * Creates a fresh, empty store for one test.
     *
     * @return the store
     * @throws Exception if it cannot be created
     */
    protected abstract Store createStore() throws Exception;

    /**
     * Opens another handle on the same store (another client, another file instance). The default
     * returns the same instance, for in-process stores.
     *
     * @param store the store created by {@link #createStore()}
     * @return a handle that sees the same keys
     * @throws Exception if it cannot be opened
     */
    protected Store connectAgain(Store store) throws Exception {
        return store;
    }

    /**
     * Returns how many internal keys a fresh store already counts ({@code init/}, {@code
     * refcount/}).
     *
     * @return the number of keys of an empty store
     */
    protected long internalKeys() {
        return 0;
    }

    /**
     * Returns whether this store has queues.
     *
     * @return {@code true} if queue calls work
     */
    protected boolean hasQueues() {
        return false;
    }

    /**
     * Returns what a get of a name that only a queue has does: over TCP it reads the empty value
     * the server has for a missing key (PyTorch's client WAITs, which a non-empty queue ends, then
     * GETs, which the libuv server answers with an empty value for a missing key); an in-process
     * store waits for a key that never comes, as PyTorch's HashStore, and times out.
     *
     * @return {@code true} if such a get reads an empty value, {@code false} if it times out
     */
    protected boolean getOfAQueueReadsAnEmptyValue() {
        return false;
    }

    /**
     * Releases anything the subclass created besides the stores (servers, files).
     *
     * @throws Exception if cleanup fails
     */
    protected void cleanUp() throws Exception {}

    @BeforeEach
    void open() throws Exception {
        store = createStore();
    }

    @AfterEach
    void closeAll() throws Exception {
        for (Store s : extra) {
            s.close();
        }
        store.close();
        cleanUp();
    }

    /**
     * Opens and remembers another handle, closed after the test.
     *
     * @return the handle
     * @throws Exception if it cannot be opened
     */
    protected Store other() throws Exception {
        Store s = connectAgain(store);
        if (s != store) {
            extra.add(s);
        }
        return s;
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @Test
    void setGetCheckAsPyTorchTests() {
        store.add("key", 1);
        store.add("key", 2);
        store.add("key", 3);
        store.set("key0", "value0");
        store.add("key3", 1);
        store.set("key1", "value1");
        store.add("key3", 2);
        store.set("key2", "value2");
        store.add("key3", 3);
        store.add("key3", 4);
        store.add("key3", 5);
        store.add("key3", 6);
        assertEquals(internalKeys() + 5, store.numKeys());
        assertEquals("6", store.getString("key"));
        assertEquals("value0", store.getString("key0"));
        assertEquals("value1", store.getString("key1"));
        assertEquals("value2", store.getString("key2"));
        assertEquals("21", store.getString("key3"));
        assertTrue(store.check(List.of("key3")));
        assertFalse(store.check(List.of("Randomkey3")));
        // A user key starting with '-' must not act as a FileStore tombstone.
        store.set("-key3", "7");
        assertEquals("7", store.getString("-key3"));
        assertEquals("21", store.getString("key3"));
        store.deleteKey("-key3");
        assertEquals(internalKeys() + 5, store.numKeys());
    }

    @Test
    void setOverwritesAndKeepsBinaryValues() {
        byte[] all = new byte[256];
        for (int i = 0; i < all.length; ++i) {
            all[i] = (byte) i;
        }
        store.set("bin", all);
        assertArrayEquals(all, store.get("bin"));
        store.set("bin", new byte[0]);
        assertArrayEquals(new byte[0], store.get("bin"));
        byte[] big = new byte[1 << 20];
        for (int i = 0; i < big.length; ++i) {
            big[i] = (byte) (i * 31 + 7);
        }
        store.set("big", big);
        assertArrayEquals(big, store.get("big"));
        store.set("uni", "héllo ✓");
        assertEquals("héllo ✓", store.getString("uni"));
    }

    @Test
    void addKeepsDecimalAscii() {
        assertEquals(-3, store.add("c", -3));
        assertEquals("-3", store.getString("c"));
        assertEquals(-3, store.add("c", 0));
        assertEquals(1L << 40, store.add("c", (1L << 40) + 3));
        store.set("n", " 12abc");
        assertEquals(13, store.add("n", 1));
        store.set("bad", "abc");
        assertThrows(StoreException.class, () -> store.add("bad", 1));
    }

    @Test
    void compareSetHasPyTorchSemantics() {
        // missing key, non-empty expected: nothing stored, expected returned
        assertArrayEquals(b("x"), store.compareSet("k", b("x"), b("y")));
        assertFalse(store.check(List.of("k")));
        // missing key, empty expected: desired stored
        assertArrayEquals(b("first"), store.compareSet("k", new byte[0], b("first")));
        assertEquals("first", store.getString("k"));
        // present and equal: replaced
        assertArrayEquals(b("second"), store.compareSet("k", b("first"), b("second")));
        assertEquals("second", store.getString("k"));
        // present and different: current returned, unchanged
        assertArrayEquals(b("second"), store.compareSet("k", b("nope"), b("third")));
        assertEquals("second", store.getString("k"));
    }

    @Test
    void deleteKeyRemovesIt() {
        store.set("gone", "1");
        assertTrue(store.deleteKey("gone"));
        assertFalse(store.check(List.of("gone")));
        assertEquals(internalKeys(), store.numKeys());
        store.setTimeout(SHORT);
        assertThrows(StoreTimeoutException.class, () -> store.get("gone"));
    }

    @Test
    void waitTimesOutNamingKeysThenSucceeds() {
        StoreTimeoutException e =
                assertThrows(
                        StoreTimeoutException.class,
                        () -> store.waitFor(List.of("bad_key"), SHORT));
        assertTrue(e.getMessage().contains("bad_key"), e.getMessage());
        assertTrue(e.getMessage().contains("300 ms"), e.getMessage());
        // every store, a PrefixStore included, names the key as its caller passed it (a PrefixStore
        // names itself, prefix included, and its cause names the namespaced key)
        assertEquals(1, e.getKeys().size());
        assertTrue(e.getKeys().get(0).endsWith("bad_key"), e.getKeys().toString());
        assertEquals(List.of("bad_key"), e.getKeys());
        store.add("good_key", 1);
        store.waitFor(List.of("good_key"), SHORT);
        // the store still works after a timed-out wait
        store.set("after", "ok");
        assertEquals("ok", store.getString("after"));
    }

    @Test
    void getBlocksUntilAnotherHandleSets() throws Exception {
        Store writer = other();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<String> got = pool.submit(() -> store.getString("late"));
            Future<?> waited = pool.submit(() -> store.waitFor(List.of("a", "b")));
            Thread.sleep(100);
            assertFalse(got.isDone());
            writer.set("late", "here");
            assertEquals("here", got.get(20, TimeUnit.SECONDS));
            writer.set("a", "1");
            Thread.sleep(50);
            assertFalse(waited.isDone(), "woke before every key existed");
            writer.add("b", 1);
            waited.get(20, TimeUnit.SECONDS);
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void appendMultiGetMultiSet() {
        store.append("potato", b("po"));
        store.append("potato", b("tato"));
        assertEquals("potato", store.getString("potato"));
        // appending a value's own bytes must still append
        store.set("echo", "x");
        store.append("echo", b("x"));
        assertEquals("xx", store.getString("echo"));
        store.append("fresh", b(""));
        assertEquals("", store.getString("fresh"));
        store.multiSet(List.of("m1", "m2", "m3"), List.of(b("a"), b(""), b("ccc")));
        List<byte[]> got = store.multiGet(List.of("m3", "m1", "m2", "potato"));
        assertArrayEquals(b("ccc"), got.get(0));
        assertArrayEquals(b("a"), got.get(1));
        assertArrayEquals(b(""), got.get(2));
        assertArrayEquals(b("potato"), got.get(3));
        assertThrows(
                IllegalArgumentException.class,
                () -> store.multiSet(List.of("x", "y"), List.of(b("1"))));
    }

    /**
     * A MULTI_GET or MULTI_SET of no keys is a query like any other, as PyTorch's {@code
     * multi_get([])} is: an empty list at once, and the handle serves on. (A TCP store's client
     * once waited for a reply of no bytes until its timeout, then dropped its connection.)
     */
    @Test
    void multiGetAndMultiSetOfNoKeys() {
        store.setTimeout(Duration.ofSeconds(5)); // bounds the wait of a client that would hang
        store.multiSet(List.of(), List.of());
        assertEquals(List.of(), store.multiGet(List.of()));
        store.set("after", b("v"));
        assertArrayEquals(b("v"), store.get("after"));
        assertEquals(List.of(), store.multiGet(List.of()));
    }

    @Test
    void badArgumentsAreRejected() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> store.set(null, b("v")));
        assertTrue(e.getMessage().contains("key"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> store.set("k", (byte[]) null));
        assertThrows(IllegalArgumentException.class, () -> store.setTimeout(Duration.ZERO));
        assertThrows(
                IllegalArgumentException.class,
                () -> store.waitFor(List.of("k"), Duration.ofMillis(-1)));
        e = assertThrows(IllegalArgumentException.class, () -> store.multiGet(null));
        assertTrue(e.getMessage().contains("keys"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> store.multiSet(null, List.of()));
    }

    @Test
    void keysTravelAsUtf8AndAnUnpairedSurrogateIsRefused() throws Exception {
        // A pair is one code point (U+1F600), UTF-8's four bytes F0 9F 98 80: kept apart from '?'
        String pair = "k\uD83D\uDE00";
        store.set(pair, "pair");
        store.set("k?", "question");
        Store other = other();
        assertEquals("pair", other.getString(pair));
        assertEquals("question", other.getString("k?"));
        // An unpaired surrogate has no UTF-8: Java's encoder would write '?' and alias "k?"
        for (String bad : List.of("k\uD800", "k\uDC00x", "\uDE00\uD83D")) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> store.set(bad, b("v")));
            assertTrue(e.getMessage().contains("unpaired surrogate"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> store.get(bad));
            assertThrows(IllegalArgumentException.class, () -> store.check(List.of("k", bad)));
        }
        assertEquals("question", other.getString("k?"));
    }

    @Test
    void queuesWorkOrSayTheyAreNotSupported() {
        if (!hasQueues()) {
            // A store without queues says so; a TCPStore server without them (PyTorch's legacy
            // one) drops the connection, which the client reports by the next reply at the latest.
            DistributedException e =
                    assertThrows(
                            DistributedException.class,
                            () -> {
                                store.queuePush("q", b("1"));
                                store.queueLength("q");
                            });
            if (e instanceof NotSupportedException) {
                assertTrue(e.getMessage().contains("queuePush"), e.getMessage());
            }
            return;
        }
        store.queuePush("q", b("1"));
        store.queuePush("q", b("2"));
        assertTrue(store.check(List.of("q")));
        assertEquals(2, store.queueLength("q"));
        assertArrayEquals(b("1"), store.queuePop("q"));
        assertArrayEquals(b("2"), store.queueTryPop("q").orElseThrow());
        assertTrue(store.queueTryPop("q").isEmpty());
        assertEquals(0, store.queueLength("q"));
        store.setTimeout(SHORT);
        assertThrows(StoreTimeoutException.class, () -> store.queuePop("q"));
        // queues and plain keys of one name stay apart: a value is no queue item, and back
        store.set("both", "value");
        assertThrows(StoreTimeoutException.class, () -> store.queuePop("both"));
        store.queuePush("only-queue", b("item"));
        // a get never takes the queue's item: it times out, or over TCP reads the (empty) value
        // the server has for that name, as PyTorch's libuv server does
        if (getOfAQueueReadsAnEmptyValue()) {
            assertArrayEquals(new byte[0], store.get("only-queue"));
        } else {
            assertThrows(StoreTimeoutException.class, () -> store.get("only-queue"));
        }
        assertArrayEquals(b("item"), store.queuePop("only-queue"));
    }

    /** A store operation one thread repeats on its handle. */
    private interface Op {
        void run(Store s);
    }

    /**
     * Runs {@code op} {@code times} times on each of 8 threads at once, half of them on this
     * store's handle and half on others.
     */
    private void onEightThreads(int times, Op op) throws Exception {
        int threads = 8;
        List<Store> handles = new ArrayList<>();
        for (int t = 0; t < threads; ++t) {
            handles.add(t % 2 == 0 ? store : other());
        }
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int t = 0; t < threads; ++t) {
                Store s = handles.get(t);
                futures.add(
                        pool.submit(
                                () -> {
                                    start.await();
                                    for (int i = 0; i < times; ++i) {
                                        op.run(s);
                                    }
                                    return null;
                                }));
            }
            start.countDown();
            for (Future<?> f : futures) {
                f.get(50, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void concurrentAddsLoseNothing() throws Exception {
        onEightThreads(250, s -> s.add("counter", 1));
        assertEquals(8 * 250, store.add("counter", 0));
        assertEquals(Integer.toString(8 * 250), store.getString("counter"));
    }

    @Test
    void concurrentAppendsOfEqualBytesLoseNothing() throws Exception {
        // Every appender appends the same byte: a compareSet-based append that takes "the store
        // now holds what I wanted to write" for success drops the appends that raced with it.
        onEightThreads(250, s -> s.append("log", b("x")));
        assertEquals(8 * 250, store.get("log").length);
    }
}
