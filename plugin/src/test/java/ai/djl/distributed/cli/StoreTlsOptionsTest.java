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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.tcp.StoreTls;
import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TcpStoreServer;
import ai.djl.distributed.store.tcp.TlsFiles;
import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code djl-dist store} with the {@code --tls-*} options, against a server with TLS. */
@Timeout(120)
class StoreTlsOptionsTest {

    @Test
    void theStoreCommandSpeaksTlsWithItsOptions(@TempDir Path dir) throws Exception {
        TlsFiles files = TlsFiles.make(dir, "djl-cli-ca");
        StoreTls tls = files.settings();
        try (TcpStoreServer server =
                TcpStoreServer.builder().optHost("127.0.0.1").optSecret(null).optTls(tls).build()) {
            String chain = files.chain.toString();
            String ca = files.authority.toString();
            int port = server.getPort();
            // mutual TLS: the client's certificate and the authority
            assertEquals(
                    0,
                    store(
                            port,
                            "--tls-cert",
                            chain,
                            "--tls-key",
                            files.key.toString(),
                            "--tls-ca",
                            ca,
                            "set",
                            "k",
                            "v"));
            // the authority alone: the server refuses a client without a certificate
            assertEquals(1, store(port, "--tls-ca", ca, "set", "k2", "v"));
            // a certificate without its key is bad usage, refused before connecting
            assertEquals(2, store(port, "--tls-cert", chain, "--tls-ca", ca, "set", "k3", "v"));
            assertEquals(2, store(port, "--tls-key", files.key.toString(), "set", "k3", "v"));
            assertEquals(1, server.numKeys());
            try (TcpStore check = connect(port, tls)) {
                assertArrayEquals("v".getBytes(StandardCharsets.UTF_8), check.get("k"));
            }
        }
    }

    /**
     * Each {@code --tls-*} option replaces only its own variable: a server given a certificate and
     * key on its command line keeps {@code $DJL_DIST_STORE_TLS_CA}, so it still requires client
     * certificates.
     */
    @Test
    void aServerOptionKeepsTheOtherVariables(@TempDir Path dir) throws Exception {
        TlsFiles files = TlsFiles.make(dir, "djl-cli-ca");
        Map<String, String> env =
                Map.of(
                        StoreTls.CERT_ENV, files.chain.toString(),
                        StoreTls.KEY_ENV, files.key.toString(),
                        StoreTls.CA_ENV, files.authority.toString());
        try (JavaProcess server =
                JavaProcess.startIsolated(
                        Main.class,
                        env,
                        "store-server",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "0",
                        "--warm-up-ms",
                        "0",
                        "--tls-cert",
                        files.chain.toString(),
                        "--tls-key",
                        files.key.toString())) {
            int port = listeningPort(server);
            StoreTls authorityOnly =
                    StoreTls.builder().optTrustedCertificates(files.authority).build();
            // without a certificate of its own, a client is refused by mutual TLS
            assertThrows(RuntimeException.class, () -> connect(port, authorityOnly).close());
            try (TcpStore client = connect(port, files.settings())) {
                client.set("k", "v");
            }
        }
    }

    /**
     * A client given only {@code --tls-ca} keeps its certificate and key of the variables, and so
     * passes a server that requires client certificates.
     */
    @Test
    void aClientOptionKeepsTheOtherVariables(@TempDir Path dir) throws Exception {
        TlsFiles files = TlsFiles.make(dir, "djl-cli-ca");
        try (TcpStoreServer server =
                TcpStoreServer.builder()
                        .optHost("127.0.0.1")
                        .optSecret(null)
                        .optWarmUp(Duration.ZERO)
                        .optTls(files.settings())
                        .build()) {
            Map<String, String> env =
                    Map.of(
                            StoreTls.CERT_ENV, files.chain.toString(),
                            StoreTls.KEY_ENV, files.key.toString());
            try (JavaProcess client =
                    JavaProcess.startIsolated(
                            Main.class,
                            env,
                            "store",
                            "--tcp",
                            "127.0.0.1:" + server.getPort(),
                            "--timeout",
                            "20",
                            "--tls-ca",
                            files.authority.toString(),
                            "set",
                            "k",
                            "v")) {
                client.assertSuccess(Duration.ofSeconds(60));
            }
            assertEquals(1, server.numKeys());
        }
    }

    /** A FileStore has no TLS: a --tls-* option with --file is bad usage, not ignored. */
    @Test
    void tlsOptionsWithAFileAreBadUsage(@TempDir Path dir) throws Exception {
        Path pem = Files.writeString(dir.resolve("ca.pem"), "not used");
        Path file = dir.resolve("store");
        long start = System.nanoTime();
        assertEquals(
                2,
                Main.run(
                        List.of(
                                "store",
                                "--file",
                                file.toString(),
                                "--tls-ca",
                                pem.toString(),
                                "--timeout",
                                "30",
                                "get",
                                "k")));
        assertTrue(System.nanoTime() - start < 10_000_000_000L, "refused only after waiting");
        assertFalse(Files.exists(file));
    }

    private static TcpStore connect(int port, StoreTls tls) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(port)
                .optSecret(null)
                .optTls(tls)
                .optTimeout(Duration.ofSeconds(20))
                .build();
    }

    /** Waits, 60 s at most, for the server's "listening on H:P" line; returns P. */
    private static int listeningPort(JavaProcess server) throws InterruptedException {
        Pattern listening = Pattern.compile("listening on [^ ]*:([0-9]+)");
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (System.nanoTime() < deadline) {
            Matcher m = listening.matcher(server.output());
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            assertTrue(server.process().isAlive(), "the server exited:\n" + server.output());
            Thread.sleep(50);
        }
        throw new AssertionError("the server did not listen in 60 s:\n" + server.output());
    }

    /** Runs {@code djl-dist store --tcp 127.0.0.1:PORT --timeout 20 ARGS}; returns its status. */
    private static int store(int port, String... args) {
        List<String> line =
                new ArrayList<>(List.of("store", "--tcp", "127.0.0.1:" + port, "--timeout", "20"));
        line.addAll(List.of(args));
        return Main.run(line);
    }
}
