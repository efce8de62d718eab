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

import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.StoreTimeoutException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/** The client: its handshake and key bytes, retries, timeouts, and a server that goes away. */
@Timeout(60)
class TcpStoreClientTest {

    // a port nothing listens on (bound once, then released)
    private static int freePort() throws Exception {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort();
        }
    }

    private static TcpStore client(int port, Duration timeout) {
        return TcpStore.builder().setHost("127.0.0.1").setPort(port).optTimeout(timeout).build();
    }

    @Test
    void clientSendsValidatePingAndPrefixedKeys() throws Exception {
        try (ServerSocket listener = new ServerSocket(0)) {
            CompletableFuture<TcpStore> connecting =
                    CompletableFuture.supplyAsync(
                            () -> client(listener.getLocalPort(), Duration.ofSeconds(20)));
            try (Socket s = listener.accept()) {
                s.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream();
                byte[] first = new byte[5];
                in.readFully(first);
                assertArrayEquals(
                        new byte[] {0, (byte) 0xCE, (byte) 0xF7, (byte) 0x85, 0x3C}, first);
                assertEquals(13, in.readUnsignedByte()); // PING
                byte[] nonce = new byte[4];
                in.readFully(nonce);
                long pid =
                        ByteBuffer.wrap(nonce).order(ByteOrder.LITTLE_ENDIAN).getInt()
                                & 0xFFFFFFFFL;
                assertEquals(ProcessHandle.current().pid() & 0xFFFFFFFFL, pid);
                out.write(nonce);
                try (TcpStore store = connecting.get(20, TimeUnit.SECONDS)) {
                    store.set("a", "b");
                    byte[] expected = {
                        1, 2, 0, 0, 0, 0, 0, 0, 0, '/', 'a', 1, 0, 0, 0, 0, 0, 0, 0, 'b'
                    };
                    byte[] got = new byte[expected.length];
                    in.readFully(got);
                    assertArrayEquals(expected, got);
                }
            }
        }
    }

    @Test
    void serversWithoutPingArePyTorch23AndStillWork() throws Exception {
        // A PyTorch 2.2/2.3 server knows no PING (13): it drops the connection on it.
        try (ServerSocket listener = new ServerSocket(0)) {
            CompletableFuture<TcpStore> connecting =
                    CompletableFuture.supplyAsync(
                            () -> client(listener.getLocalPort(), Duration.ofSeconds(20)));
            try (Socket first = listener.accept()) {
                DataInputStream in = new DataInputStream(first.getInputStream());
                in.readFully(new byte[5]); // VALIDATE
                assertEquals(13, in.readUnsignedByte());
            } // closed on PING
            try (Socket second = listener.accept()) {
                second.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(second.getInputStream());
                byte[] validate = new byte[5];
                in.readFully(validate);
                assertArrayEquals(
                        new byte[] {0, (byte) 0xCE, (byte) 0xF7, (byte) 0x85, 0x3C}, validate);
                try (TcpStore store = connecting.get(20, TimeUnit.SECONDS)) {
                    CompletableFuture<Long> count = CompletableFuture.supplyAsync(store::numKeys);
                    assertEquals(7, in.readUnsignedByte()); // GETNUMKEYS, no PING this time
                    second.getOutputStream()
                            .write(
                                    ByteBuffer.allocate(8)
                                            .order(ByteOrder.LITTLE_ENDIAN)
                                            .putLong(42)
                                            .array());
                    assertEquals(42L, count.get(20, TimeUnit.SECONDS));
                }
            }
        }
    }

    @Test
    void connectRetriesUntilTheServerAppears() throws Exception {
        int port = freePort();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<String> late =
                    pool.submit(
                            () -> {
                                try (TcpStore s = client(port, Duration.ofSeconds(30))) {
                                    return s.getString("hello");
                                }
                            });
            Thread.sleep(700);
            try (TcpStoreServer server =
                            TcpStoreServer.builder().optHost("127.0.0.1").optPort(port).build();
                    TcpStore writer = client(server.getPort(), Duration.ofSeconds(10))) {
                writer.set("hello", "world");
                assertEquals("world", late.get(30, TimeUnit.SECONDS));
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void connectGivesUpAtTheTimeoutNamingTheAddress() throws Exception {
        int port = freePort();
        long start = System.nanoTime();
        StoreException e =
                assertThrows(StoreException.class, () -> client(port, Duration.ofMillis(800)));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(e.getMessage().contains("(127.0.0.1, " + port + ")"), e.getMessage());
        assertTrue(ms >= 700 && ms < 10_000, ms + " ms");
    }

    @Test
    void timedOutWaitLeavesTheClientInStep() {
        try (TcpStore server =
                        TcpStore.builder().setHost("127.0.0.1").setPort(0).optServer(true).build();
                TcpStore other = client(server.getPort(), Duration.ofSeconds(10))) {
            for (int i = 0; i < 20; ++i) {
                assertThrows(
                        StoreTimeoutException.class,
                        () -> server.waitFor(List.of("never"), Duration.ofMillis(20)));
                other.set("k" + i, "v" + i);
                assertEquals("v" + i, server.getString("k" + i));
                assertEquals(i + 1, server.add("count", 1));
            }
        }
    }

    @Test
    void blockedCallsFailFastWhenTheServerGoesAway() throws Exception {
        TcpStore owner = TcpStore.builder().setHost("127.0.0.1").setPort(0).optServer(true).build();
        TcpStore waiter = client(owner.getPort(), Duration.ofSeconds(120));
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            Future<byte[]> blocked = pool.submit(() -> waiter.get("never-set"));
            Thread.sleep(200);
            long start = System.nanoTime();
            owner.close(); // stops the server
            java.util.concurrent.ExecutionException e =
                    assertThrows(
                            java.util.concurrent.ExecutionException.class,
                            () -> blocked.get(20, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof StoreException, e.getCause().toString());
            assertTrue(e.getCause().getMessage().contains("127.0.0.1"), e.getCause().getMessage());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
            assertThrows(StoreException.class, () -> waiter.set("a", "b"));
        } finally {
            pool.shutdownNow();
            waiter.close();
        }
    }

    @Test
    void aCallBehindAnotherThreadsWaitIsBoundedByTheTimeout() throws Exception {
        try (TcpStore server =
                        TcpStore.builder().setHost("127.0.0.1").setPort(0).optServer(true).build();
                TcpStore shared = client(server.getPort(), Duration.ofMillis(600))) {
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                // the wait outlasts the store timeout, so the second call's bounded wait expires
                // first
                Future<?> waiting =
                        pool.submit(() -> shared.waitFor(List.of("never"), Duration.ofSeconds(3)));
                Thread.sleep(100);
                long start = System.nanoTime();
                StoreException e = assertThrows(StoreException.class, () -> shared.set("x", "y"));
                assertTrue(e.getMessage().contains("one instance per thread"), e.getMessage());
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
                assertThrows(
                        java.util.concurrent.ExecutionException.class,
                        () -> waiting.get(10, TimeUnit.SECONDS));
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void closeFailsACallBlockedOnAnotherThread() throws Exception {
        try (TcpStore server =
                TcpStore.builder().setHost("127.0.0.1").setPort(0).optServer(true).build()) {
            TcpStore client = client(server.getPort(), Duration.ofSeconds(120));
            ExecutorService pool = Executors.newSingleThreadExecutor();
            try {
                Future<byte[]> blocked = pool.submit(() -> client.get("never"));
                Thread.sleep(200);
                long start = System.nanoTime();
                client.close();
                java.util.concurrent.ExecutionException e =
                        assertThrows(
                                java.util.concurrent.ExecutionException.class,
                                () -> blocked.get(20, TimeUnit.SECONDS));
                assertTrue(e.getCause() instanceof StoreException, e.getCause().toString());
                assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10));
                assertThrows(IllegalStateException.class, () -> client.set("a", "b"));
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void serverWaitsForTheWorldSize() throws Exception {
        // The timeout bounds the whole build: starting the server and the master's own ADD too,
        // which on a loaded machine took over 500 ms ("no reply to ADD [init/]"), before the wait
        // for the other client that this test is about.
        StoreException e =
                assertThrows(
                        StoreException.class,
                        () ->
                                TcpStore.builder()
                                        .setHost("127.0.0.1")
                                        .setPort(0)
                                        .optServer(true)
                                        .optWorldSize(2)
                                        .optTimeout(Duration.ofSeconds(3))
                                        .build());
        assertTrue(e.getMessage().contains("1/2 clients joined"), e.getMessage());
        int port = freePort();
        CompletableFuture<TcpStore> master =
                CompletableFuture.supplyAsync(
                        () ->
                                TcpStore.builder()
                                        .setHost("127.0.0.1")
                                        .setPort(port)
                                        .optServer(true)
                                        .optWorldSize(3)
                                        .optTimeout(Duration.ofSeconds(30))
                                        .build());
        try (TcpStore w1 =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(port)
                                .optWorldSize(3)
                                .optTimeout(Duration.ofSeconds(30))
                                .build();
                TcpStore w2 =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(port)
                                .optWorldSize(3)
                                .optTimeout(Duration.ofSeconds(30))
                                .build();
                TcpStore m = master.get(30, TimeUnit.SECONDS)) {
            assertEquals(1, m.numKeys()); // init/ only
            assertTrue(w1.check(List.of()));
            assertTrue(w2.check(List.of()));
        }
    }

    @Test
    void multiTenantServersShareOnePort() {
        try (TcpStore a =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(0)
                                .optServer(true)
                                .optMultiTenant(true)
                                .build();
                TcpStore b =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(a.getPort())
                                .optServer(true)
                                .optMultiTenant(true)
                                .build()) {
            a.set("shared", "yes");
            assertEquals("yes", b.getString("shared"));
            StoreException e =
                    assertThrows(
                            StoreException.class,
                            () ->
                                    TcpStore.builder()
                                            .setHost("127.0.0.1")
                                            .setPort(a.getPort())
                                            .optServer(true)
                                            .build());
            assertTrue(e.getMessage().contains("failed to listen"), e.getMessage());
        }
    }

    @Test
    void builderRejectsBadSettings() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> TcpStore.builder().setHost("127.0.0.1").setPort(0).build());
        assertTrue(e.getMessage().contains("port: 0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> TcpStore.builder().setPort(1).build());
        IllegalArgumentException ws =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> TcpStore.builder().setHost("h").setPort(1).optWorldSize(0).build());
        assertTrue(ws.getMessage().contains("world size cannot be 0"), ws.getMessage());
    }

    @Test
    void timeoutsPast292YearsWaitRatherThanOverflow() {
        // Stores.checkTimeout accepts any positive duration; these overflow toNanos().
        try (TcpStoreServer server =
                TcpStoreServer.builder()
                        .optHost("127.0.0.1")
                        .optSecret(null)
                        .optWarmUp(Duration.ZERO)
                        .build()) {
            for (Duration forever :
                    List.of(
                            Duration.ofMillis(Long.MAX_VALUE),
                            Duration.ofSeconds(Long.MAX_VALUE))) {
                try (TcpStore store =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(server.getPort())
                                .optSecret(null)
                                .optTimeout(forever)
                                .build()) {
                    store.set("k", "v");
                    assertEquals("v", store.getString("k"));
                    assertEquals(3, store.add("n" + forever, 3));
                    store.waitFor(List.of("k"));
                    store.waitFor(List.of("k"), forever);
                }
            }
        }
    }

    @Test
    void aWaitAnsweredWithAnythingButStopWaitingFails() throws Exception {
        // 1 is WAIT_CANCELED, though no CANCEL_WAIT was sent; 77 is no reply to WAIT at all
        for (int reply : new int[] {1, 77}) {
            try (ServerSocket listener = new ServerSocket(0)) {
                CompletableFuture<TcpStore> connecting =
                        CompletableFuture.supplyAsync(
                                () -> client(listener.getLocalPort(), Duration.ofSeconds(20)));
                try (Socket s = listener.accept()) {
                    s.setSoTimeout(10_000);
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    OutputStream out = s.getOutputStream();
                    in.readFully(new byte[5]); // VALIDATE
                    assertEquals(13, in.readUnsignedByte()); // PING
                    byte[] nonce = new byte[4];
                    in.readFully(nonce);
                    out.write(nonce);
                    try (TcpStore store = connecting.get(20, TimeUnit.SECONDS)) {
                        CompletableFuture<Void> waiting =
                                CompletableFuture.runAsync(() -> store.waitFor(List.of("k")));
                        assertEquals(6, in.readUnsignedByte()); // WAIT
                        out.write(reply);
                        out.flush();
                        Exception e =
                                assertThrows(
                                        Exception.class, () -> waiting.get(20, TimeUnit.SECONDS));
                        // at once, not a timeout of the store's 20 s
                        assertTrue(e.getCause() instanceof StoreException, e.toString());
                        assertTrue(!(e.getCause() instanceof StoreTimeoutException), e.toString());
                    }
                }
            }
        }
    }
}
