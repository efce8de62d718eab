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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.cli.Main;
import ai.djl.distributed.testing.JavaProcess;

import io.netty.channel.epoll.Epoll;
import io.netty.channel.uring.IoUring;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The store server on each of Netty's transports, io_uring, epoll and NIO, each in a JVM of its own
 * (a JVM picks its transport once): the same requests get the same answers, with the event loops
 * busy-polling (few connections) and not (many), and a loop that busy-polls still runs at once the
 * work another loop hands it. The clients here run on this JVM's own transport.
 */
class StoreServerTransportTest {

    private static final Pattern LISTENING =
            Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+) \\((\\w+)\\)");

    /** What a JVM asking for {@code asked} must get on this machine, from Netty's own checks. */
    private static String expected(String asked) {
        if (asked.equals("io_uring") && IoUring.isAvailable()) {
            return "io_uring";
        }
        return !asked.equals("nio") && Epoll.isAvailable() ? "epoll" : "nio";
    }

    @ParameterizedTest
    @ValueSource(strings = {"io_uring", "epoll", "nio"})
    @Timeout(120)
    void everyTransportServesTheSameAnswers(String asked) throws Exception {
        // a spin window of 15 s: a loop that ignored work handed to it while it spins would
        // answer the released WAIT below up to 15 s late
        try (JavaProcess server =
                JavaProcess.start(
                        Main.class,
                        transport(asked),
                        "store-server",
                        "--host=127.0.0.1",
                        "--port=0",
                        "--warm-up-ms=0",
                        "--io-threads=2",
                        "--busy-poll-us=15000000")) {
            Matcher listening = listening(server);
            assertEquals(expected(asked), listening.group(2), server.output());
            int port = Integer.parseInt(listening.group(1));

            try (TcpStore waiter = client(port);
                    TcpStore setter = client(port)) {
                // connected one after the other, the two land on different event loops
                ExecutorService pool = Executors.newSingleThreadExecutor();
                try {
                    Future<byte[]> released = pool.submit(() -> waiter.get("released"));
                    Thread.sleep(200); // the GET is parked in the server
                    long start = System.nanoTime();
                    setter.set("released", "yes");
                    assertEquals(
                            "yes",
                            new String(released.get(20, TimeUnit.SECONDS), StandardCharsets.UTF_8));
                    long tookMs = (System.nanoTime() - start) / 1_000_000;
                    assertTrue(tookMs < 5_000, "the released GET took " + tookMs + " ms");
                } finally {
                    pool.shutdownNow();
                }
                // one connection in a closed loop: the busy-polled path
                long sum = 0;
                for (int i = 1; i <= 2000; ++i) {
                    sum += i;
                    assertEquals(sum, setter.add("counter", i));
                }
                // a value of several reads and writes, checked byte for byte
                byte[] big = new byte[3 * 1024 * 1024 + 17];
                new Random(7).nextBytes(big);
                setter.set("big", big);
                assertArrayEquals(big, waiter.get("big"));
            }
            manyClients(port); // past the busy-poll's 8 connections

            assertTrue(server.process().isAlive(), server.output());
        }
    }

    private static void manyClients(int port) throws Exception {
        int clients = 16;
        int rounds = 200;
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int c = 0; c < clients; ++c) {
                int id = c;
                done.add(
                        pool.submit(
                                () -> {
                                    try (TcpStore store = client(port)) {
                                        for (int r = 0; r < rounds; ++r) {
                                            String key = "c" + id + "/" + r;
                                            store.set(key, key + "=" + (id * r));
                                            assertEquals(
                                                    key + "=" + (id * r), store.getString(key));
                                            store.add("shared", 1);
                                        }
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
            try (TcpStore store = client(port)) {
                assertEquals((long) clients * rounds, store.add("shared", 0));
                // released, counter, big, shared and the clients' own
                assertEquals(4 + clients * rounds, store.numKeys());
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    @Timeout(60)
    void anUnknownTransportIsRefusedByName() throws Exception {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> NettyTransport.pick("kqueue", true));
        assertTrue(e.getMessage().contains("kqueue"), e.getMessage());
        assertTrue(e.getMessage().contains("io_uring, epoll or nio"), e.getMessage());
        // the command line says so in one line, and exits with 1
        try (JavaProcess server =
                JavaProcess.start(Main.class, transport("kqueue"), "store-server", "--port=0")) {
            assertEquals(1, server.waitFor(Duration.ofSeconds(45)), server.output());
            assertTrue(
                    server.output()
                            .contains(
                                    "djl-dist: "
                                            + NettyTransport.PROPERTY
                                            + ": kqueue (expected: io_uring, epoll or nio)"),
                    server.output());
        }
    }

    @Test
    void ioUringUnaskedOnlyWhereTheKernelDoesNotChargeItsRings() {
        assertEquals(expected("nio"), NettyTransport.pick("nio", true));
        assertEquals(expected("epoll"), NettyTransport.pick("epoll", true));
        assertEquals(expected("io_uring"), NettyTransport.pick("", true));
        assertEquals(expected("io_uring"), NettyTransport.pick("io_uring", false)); // asked for
        assertEquals(expected("epoll"), NettyTransport.pick("", false));
        assertTrue(NettyTransport.kernelSince5dot12("6.18.44-fc-v669"));
        assertTrue(NettyTransport.kernelSince5dot12("5.12.0"));
        assertTrue(NettyTransport.kernelSince5dot12("5.15.0-91-generic"));
        assertFalse(NettyTransport.kernelSince5dot12("5.10.0-28-amd64"));
        assertFalse(NettyTransport.kernelSince5dot12("5.4.0"));
        assertFalse(NettyTransport.kernelSince5dot12("4.19.0"));
        assertFalse(NettyTransport.kernelSince5dot12(""));
        // the direct connections' receive flag, IORING_RECVSEND_POLL_FIRST, came with 5.19
        assertTrue(NettyTransport.kernelAtLeast("5.19.0", 5, 19));
        assertTrue(NettyTransport.kernelAtLeast("6.1.0-28-amd64", 5, 19));
        assertFalse(NettyTransport.kernelAtLeast("5.18.19", 5, 19));
        assertFalse(NettyTransport.kernelAtLeast("4.20.1", 5, 19));
        assertFalse(NettyTransport.kernelAtLeast("unknown", 5, 19));
    }

    /** The environment of a child JVM asking for {@code asked}, keeping any inherited options. */
    private static Map<String, String> transport(String asked) {
        String inherited = System.getenv("JAVA_TOOL_OPTIONS");
        String option = "-D" + NettyTransport.PROPERTY + "=" + asked;
        return Map.of("JAVA_TOOL_OPTIONS", inherited == null ? option : inherited + " " + option);
    }

    @Test
    void aNegativeBusyPollIsBadUsage() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        PrintStream saved = System.err;
        int status;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            status = Main.run(List.of("store-server", "--port=0", "--busy-poll-us=-1"));
        } finally {
            System.setErr(saved);
        }
        String text = err.toString(StandardCharsets.UTF_8);
        assertEquals(2, status, text);
        assertTrue(text.contains("--busy-poll-us: -1 (expected: at least 0)"), text);
    }

    private static Matcher listening(JavaProcess server) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() - deadline < 0) {
            Matcher m = LISTENING.matcher(server.output());
            if (m.find()) {
                return m;
            }
            if (!server.process().isAlive()) {
                break;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the server did not start:\n" + server.output());
    }

    private static TcpStore client(int port) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(port)
                .optTimeout(Duration.ofSeconds(30))
                .build();
    }
}
