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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.StoreException;

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** The server against raw and hostile clients: wire replies, limits, and isolation of failures. */
@Timeout(60)
class TcpStoreServerTest {

    private TcpStoreServer server;
    private TcpStore good;

    @BeforeEach
    void start() {
        server = TcpStoreServer.builder().optHost("127.0.0.1").optMaxRequestBytes(1 << 20).build();
        good = client(server.getPort());
    }

    @AfterEach
    void stop() {
        good.close();
        server.close();
    }

    private static TcpStore client(int port) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(port)
                .optTimeout(Duration.ofSeconds(20))
                .build();
    }

    @Test
    void warmUpLeavesNoKeysAndServesAtOnce() throws Exception {
        long before = System.nanoTime();
        try (TcpStoreServer warm =
                TcpStoreServer.builder()
                        .optHost("127.0.0.1")
                        .optWarmUp(Duration.ofMillis(300))
                        .optBusyPoll(Duration.ofMillis(1))
                        .build()) {
            // build() returned only after the warm-up's load ran at least a third of its share
            // (four fifths of the 300 ms; the last bursts come after it)
            long elapsed = System.nanoTime() - before;
            assertTrue(elapsed >= TimeUnit.MILLISECONDS.toNanos(80), "warm-up " + elapsed + " ns");
            // and it ends near its 300 ms, past them by one burst at most, not by timeouts
            assertTrue(elapsed < TimeUnit.SECONDS.toNanos(5), "warm-up " + elapsed + " ns");
            assertEquals(0, warm.numKeys(), "the warm-up's keys are in a scratch key space");
            try (RawClient raw = new RawClient(warm.getPort())) {
                raw.validate();
                raw.u8(4).str("/warm-up/counter").i64(5); // ADD: the warm-up's counter is not here
                assertEquals(5, raw.readI64());
                raw.u8(7); // GETNUMKEYS
                assertEquals(1, raw.readI64());
            }
        }
        assertThrows(
                IllegalArgumentException.class,
                () -> TcpStoreServer.builder().optWarmUp(Duration.ofMillis(-1)));
        assertThrows(
                IllegalArgumentException.class,
                () -> TcpStoreServer.builder().optBusyPoll(Duration.ofMillis(-1)));
    }

    @Test
    void aFailedWarmUpIsLoggedAndTheServerStarts() throws Exception {
        // keys of 8 bytes at most: the warm-up's own keys ("/warm-up/0") are refused, so its
        // clients are closed and it fails, for real
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try (TcpStoreServer cold =
                TcpStoreServer.builder()
                        .optHost("127.0.0.1")
                        .optMaxKeyBytes(8)
                        .optWarmUp(Duration.ofMillis(300))
                        .build()) {
            System.setErr(saved);
            try (RawClient raw = new RawClient(cold.getPort())) {
                raw.validate();
                raw.u8(4).str("/n").i64(5); // ADD
                assertEquals(5, raw.readI64());
            }
            assertEquals(1, cold.numKeys());
        } finally {
            System.setErr(saved);
        }
        String text = err.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("WARN"), text);
        assertTrue(text.contains("warm-up failed"), text);
    }

    @Test
    void rawQueriesGetPyTorchReplies() throws Exception {
        try (RawClient raw = new RawClient(server.getPort())) {
            raw.validate();
            raw.u8(13).u32(0xDEADBEEFL); // PING
            assertEquals(0xDEADBEEFL, raw.readU32());
            raw.u8(1).str("/k").str("v"); // SET
            raw.u8(4).str("/n").i64(20); // ADD
            assertEquals(20, raw.readI64());
            raw.u8(4).str("/n").i64(1);
            assertEquals(21, raw.readI64());
            raw.u8(3).str("/n"); // GET of a counter: decimal ASCII
            assertEquals("21", raw.readString());
            raw.u8(5).i64(2).str("/k").str("/n"); // CHECK
            assertEquals(StoreProtocol.CHECK_READY, raw.readU8());
            raw.u8(5).i64(1).str("/missing");
            assertEquals(StoreProtocol.CHECK_NOT_READY, raw.readU8());
            raw.u8(7); // GETNUMKEYS
            assertEquals(2, raw.readI64());
            raw.u8(8).str("/k"); // DELETE_KEY
            assertEquals(1, raw.readI64());
            raw.u8(8).str("/k");
            assertEquals(0, raw.readI64());
            raw.u8(17); // LIST
            assertEquals(1, raw.readI64());
            assertEquals("/n", raw.readString());
        }
        // the Java client sees raw keys under PyTorch's "/" prefix
        assertEquals("21", good.getString("n"));
    }

    @Test
    void waitIsAnsweredByTheWriteThatSatisfiesIt() throws Exception {
        try (RawClient raw = new RawClient(server.getPort())) {
            raw.validate();
            raw.u8(6).i64(2).str("/a").str("/b"); // WAIT on two keys
            good.set("a", "1");
            raw.u8(12); // CANCEL_WAIT after a: the reply is WAIT_CANCELED only
            assertEquals(StoreProtocol.WAIT_CANCELED, raw.readU8());
            raw.u8(6).i64(2).str("/a").str("/b");
            good.add("b", 1);
            assertEquals(StoreProtocol.STOP_WAITING, raw.readU8());
            // a WAIT on existing keys is answered at once
            raw.u8(6).i64(1).str("/a");
            assertEquals(StoreProtocol.STOP_WAITING, raw.readU8());
        }
    }

    @Test
    void firstQueryMustBeValidate() throws Exception {
        try (RawClient raw = new RawClient(server.getPort())) {
            raw.u8(3).str("/k"); // GET before VALIDATE
            assertTrue(raw.closedByServer());
        }
        try (RawClient raw = new RawClient(server.getPort())) {
            raw.u8(0).u32(0x12345678L); // wrong magic
            assertTrue(raw.closedByServer());
        }
        good.set("still", "works");
        assertEquals("works", good.getString("still"));
    }

    @Test
    void hostileLengthsCloseOnlyThatConnection() throws Exception {
        try (RawClient waiting = new RawClient(server.getPort())) {
            waiting.validate();
            waiting.u8(6).i64(1).str("/later");
            long[] lengths = {1L << 40, -1, (1L << 20) + 1};
            for (long length : lengths) {
                try (RawClient raw = new RawClient(server.getPort())) {
                    raw.validate();
                    raw.u8(1).str("/k").i64(length); // SET with an absurd value length
                    assertTrue(raw.closedByServer(), "length " + length);
                }
            }
            try (RawClient raw = new RawClient(server.getPort())) {
                raw.validate().u8(200); // unknown query
                assertTrue(raw.closedByServer());
            }
            try (RawClient raw = new RawClient(server.getPort())) {
                raw.validate().u8(6).i64(Long.MAX_VALUE); // WAIT on 2^63 keys
                assertTrue(raw.closedByServer());
            }
            // others were not disturbed: the waiter is still registered and gets woken
            good.set("later", "x");
            assertEquals(StoreProtocol.STOP_WAITING, waiting.readU8());
        }
    }

    @Test
    void unvalidatedClientIsRefusedBeforeItsPayloadIsBuffered() throws Exception {
        try (RawClient raw = new RawClient(server.getPort())) {
            // a SET within the size limit but without VALIDATE: refused at its first byte
            raw.u8(1).str("/k").i64(500_000);
            assertTrue(raw.closedByServer());
        }
    }

    @Test
    void clientThatNeverReadsCannotGrowServerMemory() throws Exception {
        good.set("k", "x".repeat(256));
        ByteBufAllocatorMetric metric =
                ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric();
        // MULTI_GET naming one 256-byte key 131,072 times: a 34 MiB reply for 1.3 MiB asked
        ByteArrayOutputStream request = new ByteArrayOutputStream();
        request.write(10);
        request.writeBytes(le(131072));
        for (int i = 0; i < 131072; ++i) {
            request.writeBytes(le(2));
            request.writeBytes(new byte[] {'/', 'k'});
        }
        byte[] multiGet = request.toByteArray();
        long before = metric.usedDirectMemory();
        try (Socket socket = new Socket("127.0.0.1", server.getPort())) {
            socket.setReceiveBufferSize(4096);
            OutputStream out = socket.getOutputStream();
            Thread writer =
                    new Thread(
                            () -> {
                                try {
                                    out.write(
                                            new byte[] {
                                                0, (byte) 0xCE, (byte) 0xF7, (byte) 0x85, 0x3C
                                            });
                                    for (int i = 0; i < 12; ++i) {
                                        out.write(multiGet); // blocks once the server stops reading
                                    }
                                } catch (IOException e) {
                                    // the socket is closed below
                                }
                            });
            writer.setDaemon(true);
            writer.start();
            Thread.sleep(2000);
            long grown = metric.usedDirectMemory() - before;
            // without backpressure the server held over 700 MiB of replies here
            assertTrue(grown < (96 << 20), "server buffered " + (grown >> 20) + " MiB of replies");
        }
        // the server still serves others
        good.set("after", "ok");
        assertEquals("ok", good.getString("after"));
    }

    private static byte[] le(long v) {
        return java.nio.ByteBuffer.allocate(8)
                .order(java.nio.ByteOrder.LITTLE_ENDIAN)
                .putLong(v)
                .array();
    }

    @Test
    void addOnTextClosesThatConnectionWithAClearClientError() {
        good.set("text", "abc");
        try (TcpStore victim = client(server.getPort())) {
            StoreException e = assertThrows(StoreException.class, () -> victim.add("text", 1));
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            // the message names the user's key, not the wire key "/text"
            assertTrue(e.getMessage().contains("ADD [text]"), e.getMessage());
            // the broken client keeps failing fast instead of hanging
            StoreException again = assertThrows(StoreException.class, () -> victim.set("x", "y"));
            assertTrue(again.getMessage().contains("127.0.0.1"), again.getMessage());
        }
        assertEquals("abc", good.getString("text"));
    }

    @Test
    void manyClientsRendezvousOnOneCounter() throws Exception {
        int n = 64;
        // one thread per client: each blocks until the last one arrives
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            List<Future<Long>> joined = new ArrayList<>();
            for (int i = 0; i < n; ++i) {
                joined.add(
                        pool.submit(
                                () -> {
                                    try (TcpStore s = client(server.getPort())) {
                                        long me = s.add("arrived", 1);
                                        if (me == n) {
                                            s.set("go", "1");
                                        }
                                        s.waitFor(List.of("go"));
                                        return me;
                                    }
                                }));
            }
            boolean[] seen = new boolean[n + 1];
            for (Future<Long> f : joined) {
                seen[(int) (long) f.get(40, TimeUnit.SECONDS)] = true;
            }
            for (int i = 1; i <= n; ++i) {
                assertTrue(seen[i], "ticket " + i);
            }
        } finally {
            pool.shutdownNow();
        }
        assertEquals(Long.toString(n), good.getString("arrived"));
    }

    @Test
    void builderRejectsBadSettings() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> TcpStoreServer.builder().optPort(70000).build());
        assertTrue(e.getMessage().contains("port: 70000"), e.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () -> TcpStoreServer.builder().optIoThreads(0).build());
        StoreException bound =
                assertThrows(
                        StoreException.class,
                        () ->
                                TcpStoreServer.builder()
                                        .optHost("127.0.0.1")
                                        .optPort(server.getPort())
                                        .build());
        assertTrue(bound.getMessage().contains("failed to listen"), bound.getMessage());
        assertFalse(server.isClosed());
    }
}
