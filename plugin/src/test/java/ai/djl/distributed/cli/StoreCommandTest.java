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
package ai.djl.distributed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.FileStore;
import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

@Timeout(120)
class StoreCommandTest {

    @Test
    void badOperandsAreBadUsageBeforeConnecting() throws Exception {
        int closed;
        try (ServerSocket probe = new ServerSocket(0)) {
            closed = probe.getLocalPort(); // nothing listens there once closed
        }
        List<List<String>> bad =
                List.of(
                        List.of("bogus", "k"),
                        List.of("add", "k", "x"),
                        List.of("get"),
                        List.of("set", "k"),
                        List.of("wait"),
                        List.of("num-keys", "extra"));
        for (List<String> operation : bad) {
            long start = System.nanoTime();
            // connecting would retry for the whole 60-s timeout, then fail with status 1
            assertEquals(2, store(closed, "60", operation), operation.toString());
            long seconds = (System.nanoTime() - start) / 1_000_000_000L;
            assertTrue(seconds < 10, operation + " took " + seconds + " s");
        }
    }

    @Test
    void timeoutsAreReadToTheNanosecond() throws Exception {
        try (TcpStoreServer server = server()) {
            int port = server.getPort();
            // positive, but no whole nanosecond: refused as bad usage, not failed after parsing
            assertEquals(2, store(port, "1e-12", List.of("num-keys")));
            // longer than a Duration of nanoseconds holds: waits that long, no overflow
            assertEquals(0, store(port, "Infinity", List.of("set", "k", "v")));
            assertEquals(0, store(port, "1e300", List.of("wait", "k")));
            assertEquals(1, server.numKeys());
        }
    }

    @Test
    void aFileStoreIsObservedNotJoined() throws Exception {
        Path dir = Files.createTempDirectory("djl-store-command-");
        try {
            Path file = dir.resolve("store");
            FileStore rank0 = new FileStore(file, 2);
            rank0.set("k", "v");
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertEquals(0, captured(out, "--file", file.toString(), "get", "k"));
            assertEquals("v", out.toString(StandardCharsets.UTF_8));
            // The operator was no worker: one of two closes does not delete the file.
            rank0.close();
            assertTrue(Files.exists(file), "the operator's get counted as a worker");
            try (FileStore rank1 = new FileStore(file, 2)) {
                assertEquals("v", rank1.getString("k"));
            }
            assertFalse(Files.exists(file), "the second of two workers deletes the file");

            // A read of a missing file waits for it, within --timeout, and does not create it.
            Path typo = dir.resolve("stroe");
            long start = System.nanoTime();
            assertEquals(
                    3, captured(out, "--file", typo.toString(), "--timeout", "0.5", "get", "k"));
            assertTrue(System.nanoTime() - start < 10_000_000_000L, "--timeout was not used");
            assertFalse(Files.exists(typo), "a read created the file");
            // A write creates it, as PyTorch's writers do, and joins nothing.
            assertEquals(0, captured(out, "--file", typo.toString(), "set", "k", "w"));
            try (FileStore later = new FileStore(typo, 1)) {
                assertEquals("w", later.getString("k"));
                assertEquals(2, later.numKeys(), "/k and refcount/ only: no cleanup/ written");
            }
            assertFalse(Files.exists(typo));
        } finally {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                    Files.delete(p);
                }
            }
        }
    }

    /** A value that starts with '@' is stored as typed, not replaced by the file it names. */
    @Test
    void aValueStartingWithAtIsStoredAsTyped() throws Exception {
        Path dir = Files.createTempDirectory("djl-store-command-");
        Path file = dir.resolve("v");
        Files.writeString(file, "replaced\n");
        try (TcpStoreServer server = server()) {
            String typed = "@" + file;
            assertEquals(0, store(server.getPort(), "20", List.of("set", "k", typed)));
            assertEquals(0, store(server.getPort(), "20", List.of("set", typed, "v")));
            try (TcpStore client =
                    TcpStore.builder()
                            .setHost("127.0.0.1")
                            .setPort(server.getPort())
                            .optSecret(null)
                            .optTls(null)
                            .optTimeout(Duration.ofSeconds(20))
                            .build()) {
                assertEquals(typed, client.getString("k"));
                assertEquals("v", client.getString(typed));
            }
        } finally {
            Files.delete(file);
            Files.delete(dir);
        }
    }

    /** A host that does not resolve is told as such at once, naming it; not as a timeout. */
    @Test
    void anUnknownHostIsNamed() {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        long start = System.nanoTime();
        int code =
                withErr(
                        err,
                        List.of(
                                "store",
                                "--tcp",
                                "nosuchhost.invalid:29500",
                                "--timeout",
                                "60",
                                "get",
                                "k"));
        String message = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, code, message);
        assertTrue(
                message.contains("--tcp: nosuchhost.invalid does not resolve (expected: "),
                message);
        assertTrue(System.nanoTime() - start < 30_000_000_000L, "waited out the timeout");

        err.reset();
        code =
                withErr(
                        err,
                        List.of(
                                "store-server",
                                "--host",
                                "nosuchhost.invalid",
                                "--port",
                                "0",
                                "--warm-up-ms",
                                "0"));
        message = err.toString(StandardCharsets.UTF_8);
        assertEquals(1, code, message);
        assertTrue(
                message.contains("--host: nosuchhost.invalid does not resolve (expected: "),
                message);
    }

    /** Runs djl-dist with its standard error in {@code err}. */
    private static int withErr(ByteArrayOutputStream err, List<String> line) {
        PrintStream saved = System.err;
        System.setErr(new PrintStream(err, true, StandardCharsets.UTF_8));
        try {
            return Main.run(line);
        } finally {
            System.setErr(saved);
        }
    }

    /** A server on a free port of 127.0.0.1, without a secret, TLS or warm-up. */
    private static TcpStoreServer server() {
        return TcpStoreServer.builder()
                .optHost("127.0.0.1")
                .optSecret(null)
                .optTls(null)
                .optWarmUp(Duration.ZERO)
                .build();
    }

    /** Runs {@code store} with its standard output in {@code out}, emptied first. */
    private static int captured(ByteArrayOutputStream out, String... arguments) {
        out.reset();
        List<String> line = new ArrayList<>(List.of("store"));
        line.addAll(List.of(arguments));
        PrintStream saved = System.out;
        System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
        try {
            return Main.run(line);
        } finally {
            System.setOut(saved);
        }
    }

    private static int store(int port, String timeout, List<String> operation) {
        List<String> line =
                new ArrayList<>(
                        List.of("store", "--tcp", "127.0.0.1:" + port, "--timeout", timeout));
        line.addAll(operation);
        return Main.run(line);
    }
}
