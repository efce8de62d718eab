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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Slow and large senders against the server's budget on partial requests and its read timeout,
 * while a healthy client works: the attackers are closed, the memory they hold stays within the
 * budget and is given back, and every operation of the healthy client succeeds.
 */
@Timeout(120)
class TcpStoreServerLimitsTest {

    private static final int MIB = 1 << 20;

    /** Samples what the server holds in partial requests, keeping the largest figure seen. */
    private static final class Sampler implements AutoCloseable {
        private final AtomicLong max = new AtomicLong();
        private final AtomicBoolean stop = new AtomicBoolean();
        private final Thread thread;

        Sampler(TcpStoreServer server) {
            thread =
                    new Thread(
                            () -> {
                                while (!stop.get()) {
                                    max.accumulateAndGet(server.partialRequestBytes(), Math::max);
                                    LockSupport.parkNanos(100_000);
                                }
                            },
                            "sampler");
            thread.setDaemon(true);
            thread.start();
        }

        long max() {
            return max.get();
        }

        @Override
        public void close() {
            stop.set(true);
            try {
                thread.join(10_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void waitUntil(BooleanSupplier condition, Duration limit, String what)
            throws InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("not within " + limit + ": " + what);
            }
            Thread.sleep(10);
        }
    }

    // Each sender's closedWithin, all waited for at once so open ones cost one wait, not one each.
    private static List<Boolean> closedWithin(List<SlowSender> senders, Duration limit)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(senders.size());
        try {
            List<Future<Boolean>> closed = new ArrayList<>();
            for (SlowSender s : senders) {
                closed.add(pool.submit(() -> s.closedWithin(limit)));
            }
            List<Boolean> out = new ArrayList<>();
            for (Future<Boolean> f : closed) {
                out.add(f.get(limit.toMillis() + 30_000, TimeUnit.MILLISECONDS));
            }
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void closeAll(List<SlowSender> senders) throws IOException {
        for (SlowSender s : senders) {
            s.close();
        }
    }

    @Test
    void connectionsPastTheBudgetAreClosedAndTheRestIsGivenBack() throws Exception {
        int budget = 4 * MIB;
        int attackers = 10;
        try (TcpStoreServer server =
                        TcpStoreServer.builder()
                                .optHost("127.0.0.1")
                                .optMaxRequestBytes(MIB + 64 * 1024)
                                .optMaxPartialRequestBytes(budget)
                                .optReadTimeout(Duration.ofMinutes(5)) // only the budget acts
                                .build();
                Sampler sampler = new Sampler(server);
                HealthyClient healthy = new HealthyClient(server.getPort())) {
            List<SlowSender> senders = new ArrayList<>();
            try {
                for (int i = 0; i < attackers; ++i) {
                    // all but the last KiB of a 1 MiB value: the server holds what it received
                    senders.add(SlowSender.partialSet(server.getPort(), MIB, MIB - 1024));
                }
                List<Boolean> closed = closedWithin(senders, Duration.ofSeconds(5));
                long open = closed.stream().filter(c -> !c).count();
                // every open sender holds nearly its 1 MiB: at most 4 fit, and surely the first
                assertTrue(open >= 1 && open <= budget / MIB, open + " senders left open");
                assertTrue(
                        server.partialRequestBytes() >= open * (MIB - 1024),
                        server.partialRequestBytes() + " bytes held by " + open + " senders");
            } finally {
                closeAll(senders);
            }
            waitUntil(
                    () -> server.partialRequestBytes() == 0,
                    Duration.ofSeconds(20),
                    "partial requests give their memory back, " + server.partialRequestBytes());
            System.out.println("budget: " + healthy.finish());
            assertTrue(sampler.max() <= budget, sampler.max() + " bytes held");
            assertTrue(sampler.max() >= MIB, sampler.max() + " bytes held");
        }
    }

    @Test
    void theBudgetCountsBytesReceivedNotBytesAnnounced() throws Exception {
        int request = 4 * MIB;
        int budget = 9 * MIB;
        int announcers = 10;
        try (TcpStoreServer server =
                        TcpStoreServer.builder()
                                .optHost("127.0.0.1")
                                .optMaxRequestBytes(request)
                                .optMaxPartialRequestBytes(budget)
                                .optReadTimeout(Duration.ofMinutes(5)) // only the budget acts
                                .optDirectConnections(false)
                                .build();
                RawClient honest = new RawClient(server.getPort());
                HealthyClient healthy = new HealthyClient(server.getPort())) {
            List<SlowSender> senders = new ArrayList<>();
            try {
                for (int i = 0; i < announcers; ++i) {
                    // announces the largest value a request may carry, and sends one byte of it
                    senders.add(SlowSender.partialSet(server.getPort(), request - 64, 1));
                }
                waitUntil(
                        () -> server.partialRequestBytes() > 0,
                        Duration.ofSeconds(20),
                        "the announcers' requests are partial");
                Thread.sleep(200);
                long held = server.partialRequestBytes();
                // each holds the byte it sent, in a small array, not the 4 MiB it announced
                assertTrue(held < MIB, held + " bytes held for " + announcers + " one-byte sends");
                // meanwhile a request of nearly the limit arrives in two halves, and is served
                byte[] value = new byte[request - 1024];
                Arrays.fill(value, (byte) 7);
                byte[] set = new Wire().u8(1).str("/honest").bytes(value).get();
                honest.validate().raw(Arrays.copyOf(set, set.length / 2)).flush();
                Thread.sleep(200);
                honest.raw(Arrays.copyOfRange(set, set.length / 2, set.length));
                honest.u8(3).str("/honest"); // GET
                assertEquals(value.length, honest.readI64());
                assertArrayEquals(value, honest.readBytes(value.length));
                List<Boolean> closed = closedWithin(senders, Duration.ofMillis(500));
                assertEquals(0, closed.stream().filter(c -> c).count(), "announcers closed");
            } finally {
                closeAll(senders);
            }
            waitUntil(
                    () -> server.partialRequestBytes() == 0,
                    Duration.ofSeconds(20),
                    "partial requests give their memory back, " + server.partialRequestBytes());
            System.out.println("announced: " + healthy.finish());
        }
    }

    @Test
    void requestsIncompleteForTheReadTimeoutAreClosedButIdleConnectionsAreNot() throws Exception {
        Duration timeout = Duration.ofSeconds(1);
        try (TcpStoreServer server =
                        TcpStoreServer.builder()
                                .optHost("127.0.0.1")
                                .optReadTimeout(timeout)
                                .build();
                TcpStore idleClient =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(server.getPort())
                                .optTimeout(Duration.ofSeconds(20))
                                .build();
                RawClient idle = new RawClient(server.getPort());
                RawClient waiting = new RawClient(server.getPort());
                RawClient punctual = new RawClient(server.getPort());
                HealthyClient healthy = new HealthyClient(server.getPort())) {
            long idleSince = System.nanoTime();
            idle.validate().flush();
            waiting.validate().u8(6).i64(1).str("/later"); // a WAIT blocked until the end
            assertEquals(-1, waiting.readWithin(1));
            List<SlowSender> senders = new ArrayList<>();
            try {
                senders.add(SlowSender.partialSet(server.getPort(), MIB, 1000));
                senders.add(SlowSender.partialHeader(server.getPort()));
                // bytes keep coming, but the request never completes
                senders.add(
                        SlowSender.partialSet(server.getPort(), MIB, 10)
                                .trickle(Duration.ofMillis(50)));
                // meanwhile: requests that each take a tenth of the timeout, in a row for longer
                // than the timeout, are all served
                punctual.validate();
                for (int i = 0; i < 15; ++i) {
                    punctual.u8(1).i64(4).flush(); // SET, its key's length
                    Thread.sleep(50);
                    punctual.u8('/').u8('p').u8('0' + i / 10).u8('0' + i % 10).i64(2).flush();
                    Thread.sleep(50);
                    punctual.u8('o').u8('k' - i % 2); // value "ok" or "oj", sent with the next
                }
                punctual.u8(3).str("/p13"); // GET
                assertEquals("oj", punctual.readString());
                punctual.u8(3).str("/p14");
                assertEquals("ok", punctual.readString());
                List<Boolean> closed = closedWithin(senders, Duration.ofSeconds(20));
                for (int i = 0; i < senders.size(); ++i) {
                    assertTrue(closed.get(i), "sender " + i + " still open");
                    // never before the timeout, counted from when its request began
                    long ms = senders.get(i).millisSinceStart();
                    assertTrue(ms >= timeout.toMillis() * 9 / 10, "sender " + i + " after " + ms);
                }
            } finally {
                closeAll(senders);
            }
            // idle twice the timeout and more: still served
            long idleFor = 2 * timeout.toNanos() + TimeUnit.MILLISECONDS.toNanos(500);
            waitUntil(() -> System.nanoTime() - idleSince > idleFor, timeout.multipliedBy(4), "");
            idle.u8(13).u32(7); // PING
            assertEquals(7, idle.readU32());
            idleClient.set("later", "now"); // wakes the WAIT
            assertEquals(StoreProtocol.STOP_WAITING, waiting.readU8());
            assertEquals("now", idleClient.getString("later"));
            waitUntil(
                    () -> server.partialRequestBytes() == 0,
                    Duration.ofSeconds(20),
                    "partial requests give their memory back, " + server.partialRequestBytes());
            System.out.println("read timeout: " + healthy.finish());
        }
    }

    /**
     * The smallest budget the builder takes (twice a 1 MiB request limit, plus 1 MiB) receives a
     * request of one value at the limit that arrives in parts: the value's array grows by copying,
     * and its last growth holds about twice the limit. One byte less is refused by the builder.
     */
    @Test
    void theSmallestBudgetReceivesTheLargestRequestInParts() throws Exception {
        int limit = MIB;
        int smallest = 3 * MIB;
        assertThrows(
                IllegalArgumentException.class,
                () ->
                        TcpStoreServer.builder()
                                .optMaxRequestBytes(limit)
                                .optMaxPartialRequestBytes(smallest - 1)
                                .build());
        try (TcpStoreServer server =
                        TcpStoreServer.builder()
                                .optHost("127.0.0.1")
                                .optMaxRequestBytes(limit)
                                .optMaxPartialRequestBytes(smallest)
                                .optDirectConnections(false)
                                .build();
                RawClient client = new RawClient(server.getPort())) {
            byte[] value =
                    new byte[limit - 2]; // with the key "/k": key and value bytes at the limit
            Arrays.fill(value, (byte) 3);
            byte[] set = new Wire().u8(1).str("/k").bytes(value).get();
            int[] cuts = {set.length / 3, 2 * set.length / 3, set.length};
            client.validate();
            int from = 0;
            for (int cut : cuts) {
                client.raw(Arrays.copyOfRange(set, from, cut)).flush();
                from = cut;
                Thread.sleep(100); // each part its own read: the value's array grows
            }
            client.u8(3).str("/k"); // GET
            assertEquals(value.length, client.readI64());
            assertArrayEquals(value, client.readBytes(value.length));
        }
    }

    /**
     * A value length near {@code Long.MAX_VALUE} is refused at once, as every length past the
     * request limit is: added to the request's bytes first, it once wrapped the sum negative,
     * passed the limit check, and the server went on buffering what followed until the budget or
     * the read timeout stopped it.
     */
    @Test
    void aValueLengthThatWouldOverflowIsRefusedAtOnce() throws Exception {
        try (TcpStoreServer server =
                        TcpStoreServer.builder()
                                .optHost("127.0.0.1")
                                .optReadTimeout(Duration.ofMinutes(5)) // only the limit acts
                                .optDirectConnections(false)
                                .build();
                RawClient client = new RawClient(server.getPort())) {
            client.validate().u8(1).str("/k").i64(Long.MAX_VALUE).flush();
            try {
                client.raw(new byte[4 * MIB]).flush();
            } catch (IOException e) {
                // refused and closed while sending: as expected
            }
            assertTrue(client.closedByServer(), "the connection is still open");
            assertEquals(0, server.partialRequestBytes());
        }
    }

    private static final int NAMES = 31_700; // one 256-byte value named so often: 8 MiB of reply

    // A server whose request limit allows a MULTI_GET reply of 8 MiB, holding that 256-byte value.
    private static TcpStoreServer replyServer(long replyBudget, Duration readTimeout)
            throws IOException {
        TcpStoreServer server =
                TcpStoreServer.builder()
                        .optHost("127.0.0.1")
                        .optMaxRequestBytes(8 * MIB)
                        .optMaxQueuedReplyBytes(replyBudget)
                        .optReadTimeout(readTimeout)
                        .optDirectConnections(false)
                        .build();
        try (RawClient setter = new RawClient(server.getPort())) {
            setter.validate().u8(1).str("/v").raw(new Wire().bytes(new byte[256]).get());
            setter.u8(13).u32(7); // PING: the SET is applied
            assertEquals(7, setter.readU32());
        }
        return server;
    }

    // VALIDATE, then a MULTI_GET naming /v NAMES times: 10 bytes per key asking for 264.
    private static byte[] bigMultiGet() {
        Wire multiGet = new Wire().u8(0).u32(StoreProtocol.MAGIC).u8(10).i64(NAMES);
        for (int i = 0; i < NAMES; ++i) {
            multiGet.str("/v");
        }
        return multiGet.get();
    }

    // A client that sends the request and never reads: its reply stays in the server (loopback's
    // kernel buffers take a megabyte or so of it, and a reply they took whole would be sent).
    private static Socket stalled(TcpStoreServer server, byte[] request) throws IOException {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(4096);
        socket.connect(new InetSocketAddress("127.0.0.1", server.getPort()), 10_000);
        socket.setSoTimeout(10_000);
        socket.getOutputStream().write(request);
        return socket;
    }

    private static void closeSockets(List<Socket> sockets) throws IOException {
        for (Socket socket : sockets) {
            socket.close();
        }
    }

    /**
     * Clients that ask for 8 MiB MULTI_GET replies from requests of 317 KB and never read them hold
     * at most the server's reply budget, 24 MiB, together: those past it wait, unanswered and open,
     * their replies not built. A reading client that asks then waits too, and is answered in full
     * once the others go; a client of small requests is served throughout; and the memory comes
     * back.
     */
    @Test
    void repliesNobodyReadsWaitForTheReplyBudget() throws Exception {
        int budget = 24 * MIB;
        long reply = NAMES * (8L + 256);
        byte[] request = bigMultiGet();
        try (TcpStoreServer server = replyServer(budget, Duration.ofMinutes(5));
                HealthyClient healthy = new HealthyClient(server.getPort());
                RawClient reader = new RawClient(server.getPort())) {
            List<Socket> sockets = new ArrayList<>();
            try {
                for (int i = 0; i < 8; ++i) {
                    sockets.add(stalled(server, request));
                }
                waitUntil(
                        () -> server.queuedReplyBytes() > 0,
                        Duration.ofSeconds(20),
                        "the replies are built");
                Thread.sleep(500); // every request has been tried
                int answered = 0;
                for (Socket socket : sockets) {
                    answered += socket.getInputStream().available() > 0 ? 1 : 0;
                }
                assertTrue(
                        answered >= 1 && answered <= budget / reply,
                        answered + " of 8 answered, budget " + budget + ", reply " + reply);
                assertTrue(server.queuedReplyBytes() <= budget, server.queuedReplyBytes() + "");
                reader.raw(request).flush();
                Thread.sleep(200);
                assertEquals(-1, reader.readWithin(300), "the reader was answered past the budget");
            } finally {
                closeSockets(sockets);
            }
            for (int i = 0; i < NAMES; ++i) {
                assertEquals(256, reader.readI64());
                assertArrayEquals(new byte[256], reader.readBytes(256));
            }
            waitUntil(
                    () -> server.queuedReplyBytes() == 0,
                    Duration.ofSeconds(20),
                    "unsent replies give their memory back, " + server.queuedReplyBytes());
            System.out.println("replies: " + healthy.finish());
        }
    }

    /**
     * A MULTI_GET that waits for the reply budget longer than the read timeout closes its
     * connection, and only its own: the client holding the budget stays served.
     */
    @Test
    void aReplyThatWaitsPastTheReadTimeoutClosesItsConnection() throws Exception {
        byte[] request = bigMultiGet();
        try (TcpStoreServer server = replyServer(8 * MIB, Duration.ofSeconds(2))) {
            List<Socket> sockets = new ArrayList<>();
            try {
                sockets.add(stalled(server, request));
                waitUntil(
                        () -> server.queuedReplyBytes() > 0,
                        Duration.ofSeconds(20),
                        "the first reply is built");
                Socket waiting = stalled(server, request);
                sockets.add(waiting);
                waiting.setSoTimeout(30_000);
                boolean closed;
                try {
                    closed = waiting.getInputStream().read() == -1;
                } catch (IOException e) { // reset
                    closed = true;
                }
                assertTrue(closed, "a reply past the budget was sent");
                assertTrue(sockets.get(0).getInputStream().available() > 0, "first reply");
            } finally {
                closeSockets(sockets);
            }
        }
    }

    @Test
    void builderChecksTheLimits() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                TcpStoreServer.builder()
                                        .optMaxRequestBytes(8 * MIB)
                                        .optMaxPartialRequestBytes(4 * MIB)
                                        .build());
        assertTrue(
                e.getMessage()
                        .contains(
                                "maxPartialRequestBytes: 4194304 (expected: at least twice"
                                        + " maxRequestBytes plus 1 MiB, 17825792)"),
                e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> TcpStoreServer.builder().optReadTimeout(Duration.ZERO).build());
        assertTrue(e.getMessage().contains("readTimeout: PT0S"), e.getMessage());
        // a value is one Java array: a request limit past the largest one could never be met
        long tooLarge = Integer.MAX_VALUE + 1L;
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                TcpStoreServer.builder()
                                        .optHost("127.0.0.1")
                                        .optMaxRequestBytes(tooLarge)
                                        .optMaxPartialRequestBytes(tooLarge)
                                        .build()
                                        .close());
        assertEquals("maxRequestBytes: 2147483648 (expected: 1 to 2147483583)", e.getMessage());
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                TcpStoreServer.builder()
                                        .optMaxRequestBytes(8 * MIB)
                                        .optMaxQueuedReplyBytes(8 * MIB - 1)
                                        .build());
        assertEquals(
                "maxQueuedReplyBytes: 8388607 (expected: at least maxRequestBytes, 8388608)",
                e.getMessage());
        // unset, both budgets grow with the request limit: 200 MiB needs 401 MiB of the first
        TcpStoreServer.builder().optHost("127.0.0.1").optMaxRequestBytes(200 * MIB).build().close();
        // the same checks when a TcpStore starts the server
        TcpStore.Builder serving =
                TcpStore.builder().setHost("127.0.0.1").setPort(0).optServer(true);
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> serving.optServerMaxPartialRequestBytes(MIB).build());
        assertTrue(e.getMessage().startsWith("maxPartialRequestBytes: 1048576"), e.getMessage());
        serving.optServerMaxPartialRequestBytes(StoreProtocol.DEFAULT_MAX_PARTIAL_REQUEST_BYTES);
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> serving.optServerReadTimeout(Duration.ofSeconds(-1)).build());
        assertTrue(e.getMessage().startsWith("readTimeout: PT-1S"), e.getMessage());
    }
}
