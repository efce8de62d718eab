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
package ai.djl.distributed.store.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;

/**
 * The server's wait registrations, over raw connections: a WAIT that names a key many times is
 * registered once per distinct key (as PyTorch's server counts it: one write of the key releases
 * it), so cancelling it is cheap and other clients are served meanwhile; and a QUEUE_PUSH counts
 * for each WAIT it passes, as PyTorch's libuv server does, waking the first one it completes.
 */
@Timeout(120)
class StoreWaitersTest {

    private static final int MAX_KEYS = StoreProtocol.DEFAULT_MAX_KEYS;

    private TcpStoreServer server;

    @BeforeEach
    void start() {
        server = TcpStoreServer.builder().optHost("127.0.0.1").optIoThreads(2).build();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private static void waitUntil(IntSupplier value, int expected, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (value.getAsInt() != expected) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError(what + ": " + value.getAsInt() + ", not " + expected);
            }
            Thread.sleep(5);
        }
    }

    // WAIT on one key named MAX_KEYS times, the most a request may name.
    private static void waitOnRepeatedKey(RawClient client, String key) throws Exception {
        client.u8(6).i64(MAX_KEYS);
        for (int i = 0; i < MAX_KEYS; ++i) {
            client.str(key);
        }
        client.flush();
    }

    // A GET on another connection, in milliseconds: it needs the state's lock.
    private static long millisToGet(RawClient other) throws Exception {
        long start = System.nanoTime();
        other.u8(3).str("/k");
        assertEquals("v", other.readString());
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    }

    @Test
    void aKeyNamedManyTimesIsRegisteredOnceAndCancelledAtOnce() throws Exception {
        RawClient waiter = new RawClient(server.getPort());
        try (RawClient other = new RawClient(server.getPort())) {
            waiter.validate();
            other.validate().u8(1).str("/k").str("v").flush(); // SET
            waitOnRepeatedKey(waiter, "/x");
            waitUntil(() -> server.waitingOn("/x") > 0 ? 1 : 0, 1, "WAIT registered");
            assertEquals(1, server.waitingOn("/x"), "registrations of one waiter on /x");
            waiter.u8(12).flush(); // CANCEL_WAIT
            long millis = millisToGet(other);
            assertEquals(StoreProtocol.WAIT_CANCELED, waiter.readU8());
            assertEquals(0, server.waitingOn("/x"));
            // generous: one cancel of n registrations of the same key used to take n^2/2 moves
            // under the state's lock, seconds on a small machine
            assertTrue(millis < 2000, "GET served after " + millis + " ms");
            // the same WAIT, then the connection closes: its registrations go as cheaply
            waitOnRepeatedKey(waiter, "/x");
            waitUntil(() -> server.waitingOn("/x"), 1, "WAIT registered again");
            waiter.close();
            waitUntil(() -> server.waitingOn("/x"), 0, "registrations after close");
            assertTrue(millisToGet(other) < 2000);
        } finally {
            waiter.close();
        }
    }

    @Test
    void aKeyNamedTwiceIsReleasedByOneWrite() throws Exception {
        try (RawClient twice = new RawClient(server.getPort());
                RawClient apart = new RawClient(server.getPort());
                RawClient writer = new RawClient(server.getPort())) {
            twice.validate().u8(6).i64(2).str("/x").str("/x").flush();
            apart.validate().u8(6).i64(3).str("/x").str("/y").str("/x").flush();
            waitUntil(() -> server.waitingOn("/x"), 2, "waiters on /x");
            writer.validate().u8(1).str("/x").str("1").flush();
            // PyTorch's server: WAIT [x, x] counts x twice and one SET of x counts it twice
            assertEquals(StoreProtocol.STOP_WAITING, twice.readU8());
            assertEquals(-1, apart.readWithin(200), "released while /y is missing");
            writer.u8(1).str("/y").str("1").flush();
            assertEquals(StoreProtocol.STOP_WAITING, apart.readU8());
        }
    }

    @Test
    void aPushCountsForEachWaitItPassesAndWakesTheFirstItCompletes() throws Exception {
        try (RawClient both = new RawClient(server.getPort());
                RawClient queueOnly = new RawClient(server.getPort());
                RawClient later = new RawClient(server.getPort());
                RawClient writer = new RawClient(server.getPort())) {
            both.validate().u8(6).i64(2).str("/q").str("/k").flush(); // WAIT [q, k]
            waitUntil(() -> server.waitingOn("/q"), 1, "first waiter on /q");
            queueOnly.validate().u8(6).i64(1).str("/q").flush(); // WAIT [q]
            waitUntil(() -> server.waitingOn("/q"), 2, "second waiter on /q");
            later.validate().u8(6).i64(1).str("/q").flush(); // WAIT [q], after the first wake-up
            waitUntil(() -> server.waitingOn("/q"), 3, "third waiter on /q");
            writer.validate().u8(14).str("/q").str("item").flush(); // QUEUE_PUSH
            // the push passes WAIT [q, k] (q now exists for it) and wakes WAIT [q]; one item,
            // one pop: the third waiter keeps waiting
            assertEquals(StoreProtocol.STOP_WAITING, queueOnly.readU8());
            assertEquals(-1, both.readWithin(200), "released while /k is missing");
            assertEquals(-1, later.readWithin(50), "a second waiter released by one push");
            assertEquals(1, server.waitingOn("/q"), "only the third waiter is left on /q");
            writer.u8(1).str("/k").str("1").flush(); // SET k: WAIT [q, k] is complete
            assertEquals(StoreProtocol.STOP_WAITING, both.readU8());
            writer.u8(14).str("/q").str("item").flush(); // the next push wakes the third
            assertEquals(StoreProtocol.STOP_WAITING, later.readU8());
        }
    }

    @Test
    void aPushCountsOnceForAWaitOnTheQueueAndAnotherKey() throws Exception {
        try (RawClient both = new RawClient(server.getPort());
                RawClient writer = new RawClient(server.getPort())) {
            both.validate().u8(6).i64(2).str("/q").str("/k").flush();
            waitUntil(() -> server.waitingOn("/q"), 1, "waiter on /q");
            writer.validate().u8(14).str("/q").str("a").u8(14).str("/q").str("b").flush();
            writer.u8(16).str("/q"); // QUEUE_LEN: both pushes are done
            assertEquals(2, writer.readI64());
            assertEquals(-1, both.readWithin(200), "two pushes of /q stood for /k");
            writer.u8(1).str("/k").str("1").flush();
            assertEquals(StoreProtocol.STOP_WAITING, both.readU8());
            assertEquals(0, server.waitingOn("/q"));
            assertEquals(0, server.waitingOn("/k"));
        }
    }

    @Test
    void waitersAreForgottenWhenTheirConnectionCloses() throws Exception {
        RawClient gone = new RawClient(server.getPort());
        gone.validate().u8(6).i64(3).str("/a").str("/b").str("/c").flush();
        waitUntil(() -> server.waitingOn("/b"), 1, "waiter on /b");
        gone.close();
        waitUntil(() -> server.waitingOn("/a") + server.waitingOn("/b"), 0, "after close");
        assertEquals(0, server.waitingOn("/c"));
        try (TcpStore store =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(server.getPort())
                        .optTimeout(Duration.ofSeconds(20))
                        .build()) {
            store.set("a", "1"); // wakes nobody: nothing is left to wake
            assertEquals("1", store.getString("a"));
        }
    }
}
