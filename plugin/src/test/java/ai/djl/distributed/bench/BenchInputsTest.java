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
package ai.djl.distributed.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.cli.Main;
import ai.djl.distributed.store.tcp.TcpStoreServer;
import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** The benchmarks' inputs are checked before any work, and their failures name the cause. */
@Timeout(120)
class BenchInputsTest {

    private static TcpStoreServer server(String secret) {
        return TcpStoreServer.builder()
                .optHost("127.0.0.1")
                .optSecret(secret)
                .optTls(null)
                .optWarmUp(Duration.ZERO)
                .build();
    }

    private static int closedPort() throws Exception {
        try (ServerSocket probe = new ServerSocket(0)) {
            return probe.getLocalPort(); // nothing listens there once closed
        }
    }

    @Test
    void rendezvousRefusesCountsBelowOneBeforeConnecting() throws Exception {
        int closed = closedPort();
        assertMessage(
                "window: 0 (expected: at least 1)",
                () -> new StoreRendezvousBench("127.0.0.1", closed, 0, null, null));
        StoreRendezvousBench bench = new StoreRendezvousBench("127.0.0.1", closed, 4, null, null);
        assertMessage("clients: 0 (expected: at least 1)", () -> bench.run(0, "x", 10));
        assertMessage("clients: -1 (expected: at least 1)", () -> bench.run(-1, "x", 10));
        assertMessage("timeoutSeconds: 0 (expected: at least 1)", () -> bench.run(2, "x", 0));
    }

    /** A timeout past an int of milliseconds is Netty's connect timeout at its largest. */
    @Test
    void rendezvousTakesATimeoutPastAnIntOfMilliseconds() throws Exception {
        try (TcpStoreServer s = server(null)) {
            StoreRendezvousBench bench =
                    new StoreRendezvousBench("127.0.0.1", s.getPort(), 4, null, null);
            double seconds = bench.run(3, "long-timeout", Integer.MAX_VALUE);
            assertTrue(seconds > 0 && seconds < 60, "" + seconds);
        }
    }

    /**
     * Clients whose connection is refused after it opened (the secrets differ) fail the round at
     * once, with the server's reason: they held their connect permits and the wait for the releases
     * ran out the whole timeout, then reported "connects stalled" without a cause.
     */
    @Test
    void aRefusedClientFailsTheRoundAtOnceWithItsCause() throws Exception {
        try (TcpStoreServer s = server("the-right-secret")) {
            for (int window : new int[] {2, 64}) {
                StoreRendezvousBench bench =
                        new StoreRendezvousBench(
                                "127.0.0.1", s.getPort(), window, "a-wrong-secret", null);
                long start = System.nanoTime();
                IllegalStateException e =
                        assertThrows(
                                IllegalStateException.class,
                                () -> bench.run(6, "refused-" + window, 30));
                long millis = (System.nanoTime() - start) / 1_000_000;
                assertTrue(millis < 10_000, "window " + window + ": failed after " + millis);
                assertTrue(e.getMessage().startsWith("a client failed: "), e.getMessage());
                assertTrue(e.getMessage().contains("the store secrets differ"), e.getMessage());
            }
        }
    }

    @Test
    void storeOpsRefusesCountsBelowOne() throws Exception {
        try (TcpStoreServer s = server(null)) {
            int port = s.getPort();
            assertMessage(
                    "clients: 0 (expected: at least 1)",
                    () -> StoreOpsBench.run("127.0.0.1", port, 0, 10));
            assertMessage(
                    "rounds: 0 (expected: at least 1)",
                    () -> StoreOpsBench.run("127.0.0.1", port, 2, 0));
            // the counts that pass measure
            assertTrue(StoreOpsBench.run("127.0.0.1", port, 2, 5) > 0);
        }
    }

    /** Ranks still running at the timeout are stopped with a message, not a silent 124. */
    @Test
    void collectivesSaysWhyItExitsWith124() throws Exception {
        PrintStream err = System.err;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        int code;
        System.setErr(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            // no rank JVM exits within a millisecond of its start
            code =
                    CollectivesBench.launch(
                            2, List.of("all_reduce"), List.of(4096L), "tcp", Duration.ofMillis(1));
        } finally {
            System.setErr(err);
        }
        assertEquals(124, code);
        assertEquals(
                "bench collectives: rank 0 still running after 0.001 s: every rank stopped (exit"
                        + " status 124)",
                captured.toString(StandardCharsets.UTF_8).strip());
    }

    /**
     * {@code djl-dist bench collectives} stopped by SIGTERM stops its ranks before it exits: they
     * ran on, orphaned, to the end of the benchmark (tens of seconds with the default ops and
     * sizes), since a JVM stopped by a signal runs its shutdown hooks and no finally block.
     */
    @Test
    @Timeout(180)
    void collectivesStopsItsRanksWhenItIsStopped() throws Exception {
        List<ProcessHandle> ranks = new ArrayList<>();
        try (JavaProcess bench =
                JavaProcess.startIsolated(
                        Main.class, Map.of(), "bench", "collectives", "--world-size", "2")) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (ranks.size() < 2) {
                assertTrue(System.nanoTime() < deadline, "no 2 ranks in 60 s:\n" + bench.output());
                assertTrue(bench.process().isAlive(), "bench exited:\n" + bench.output());
                ranks.clear();
                bench.process().children().forEach(ranks::add);
                Thread.sleep(50);
            }
            bench.process().destroy(); // SIGTERM
            // the hook's bound: 5 s of grace, then SIGKILL and 10 s at most
            assertTrue(bench.process().waitFor(30, TimeUnit.SECONDS), "bench still running");
            // the ranks went before bench exited; a second for an exit to show in /proc
            long gone = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (ranks.stream().anyMatch(BenchInputsTest::running) && System.nanoTime() < gone) {
                Thread.sleep(20);
            }
            assertTrue(
                    ranks.stream().noneMatch(BenchInputsTest::running),
                    "ranks outlived bench collectives: " + ranks);
        } finally {
            ranks.forEach(ProcessHandle::destroyForcibly);
        }
    }

    // alive and no zombie (an orphan's exit may be collected late, or never, by pid 1)
    private static boolean running(ProcessHandle h) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
            return h.isAlive() && stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (IOException e) {
            return h.isAlive();
        }
    }

    private static void assertMessage(String expected, ThrowingRunnable run) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> run.run());
        assertEquals(expected, e.getMessage());
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
