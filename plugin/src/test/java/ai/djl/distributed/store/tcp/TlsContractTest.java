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
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.StoreException;

import io.netty.handler.ssl.SslProvider;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/**
 * The store over TLS, run against each TLS implementation: keys served and encrypted on the wire,
 * mutual TLS, and every way a connection is refused (no TLS on either side, an untrusted
 * certificate, a missing or foreign client certificate), each at once and with a message naming the
 * cause; and the settings' errors. The certificates are made by the JDK's keytool for the run
 * ({@link TlsFiles}).
 */
@Timeout(120)
abstract class TlsContractTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final byte[] VALUE =
            "a value nobody on the wire may read".getBytes(StandardCharsets.UTF_8);

    @TempDir static Path dir;
    static TlsFiles job;
    static TlsFiles other; // another authority and its certificate

    @BeforeAll
    static void certificates() throws Exception {
        job = TlsFiles.make(dir.resolve("job"), "djl-test-job-ca");
        other = TlsFiles.make(dir.resolve("other"), "djl-test-other-ca");
    }

    /**
     * Returns the TLS implementation under test.
     *
     * @return the provider
     */
    abstract SslProvider provider();

    StoreTls serverOnly(TlsFiles f) {
        return StoreTls.builder().provider(provider()).optCertificate(f.chain, f.key).build();
    }

    StoreTls trusting(TlsFiles f) {
        return StoreTls.builder().provider(provider()).optTrustedCertificates(f.authority).build();
    }

    StoreTls mutual(TlsFiles own, TlsFiles trusted) {
        return StoreTls.builder()
                .provider(provider())
                .optCertificate(own.chain, own.key)
                .optTrustedCertificates(trusted.authority)
                .build();
    }

    static TcpStoreServer server(StoreTls tls) {
        return TcpStoreServer.builder().optHost("127.0.0.1").optSecret(null).optTls(tls).build();
    }

    static TcpStore client(int port, StoreTls tls) {
        return client(port, tls, null);
    }

    private static TcpStore client(int port, StoreTls tls, String secret) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(port)
                .optTimeout(TIMEOUT)
                .optSecret(secret)
                .optTls(tls)
                .build();
    }

    /** Fails unless {@code call} throws a StoreException well before the connect timeout. */
    static StoreException refusedAtOnce(Runnable call) {
        long start = System.nanoTime();
        StoreException e = assertThrows(StoreException.class, call::run);
        assertTrue(
                System.nanoTime() - start < TIMEOUT.toNanos() / 3,
                "refused only after retries: " + e.getMessage());
        return e;
    }

    @Test
    void keysAreServedAndEncryptedOnTheWire() throws Exception {
        try (TcpStoreServer server = server(serverOnly(job));
                Relay relay = new Relay(server.getPort());
                TcpStore a = client(relay.port(), trusting(job));
                TcpStore b = client(server.getPort(), trusting(job))) {
            a.set("secret/key", VALUE);
            assertEquals(
                    new String(VALUE, StandardCharsets.UTF_8),
                    new String(b.get("secret/key"), StandardCharsets.UTF_8));
            assertEquals(5, a.add("n", 5));
            assertEquals(2, server.numKeys());
            byte[] wire = relay.clientBytes();
            // a TLS handshake record opens the stream, and neither key nor value is readable
            assertEquals(0x16, wire[0] & 0xFF, "first byte of the stream");
            assertEquals(0x03, wire[1] & 0xFF, "TLS major version");
            String seen = new String(wire, StandardCharsets.ISO_8859_1);
            assertFalse(seen.contains("secret/key"), "the key crossed the wire in clear");
            assertFalse(seen.contains("nobody on the wire"), "the value crossed the wire in clear");
        }
    }

    @Test
    void aServingInstanceUsesTlsForItsServerAndItsOwnClient() {
        StoreTls tls = mutual(job, job);
        try (TcpStore master =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(0)
                                .optServer(true)
                                .optWorldSize(2)
                                .optWaitForWorkers(false)
                                .optSecret(null)
                                .optTls(tls)
                                .optTimeout(TIMEOUT)
                                .build();
                TcpStore worker = client(master.getPort(), tls)) {
            master.set("k", VALUE);
            assertEquals(VALUE.length, worker.get("k").length);
            refusedAtOnce(() -> client(master.getPort(), null).close());
        }
    }

    @Test
    void mutualTlsRequiresACertificateOfTheJobsAuthority() {
        try (TcpStoreServer server = server(mutual(job, job))) {
            try (TcpStore ok = client(server.getPort(), mutual(job, job))) {
                ok.set("k", VALUE);
            }
            StoreException none =
                    refusedAtOnce(() -> client(server.getPort(), trusting(job)).close());
            // the server's alert, or, when the client's first query meets the closed socket, the
            // close; either way final and naming the fix
            assertTrue(none.getMessage().contains("TLS"), none.getMessage());
            assertTrue(none.getMessage().contains(StoreTls.CERT_ENV), none.getMessage());
            // a certificate of another authority, though the client trusts the job's server
            StoreException foreign =
                    refusedAtOnce(() -> client(server.getPort(), mutual(other, job)).close());
            assertTrue(foreign.getMessage().contains(StoreTls.CERT_ENV), foreign.getMessage());
            assertEquals(1, server.numKeys());
        }
    }

    @Test
    void aServerCertificateOfAnotherAuthorityIsRefused() {
        try (TcpStoreServer server = server(serverOnly(other))) {
            StoreException e = refusedAtOnce(() -> client(server.getPort(), trusting(job)).close());
            assertTrue(e.getMessage().contains("TLS handshake"), e.getMessage());
            assertTrue(e.getMessage().contains(StoreTls.CA_ENV), e.getMessage());
            assertEquals(0, server.numKeys());
        }
    }

    @Test
    void aClientWithoutTlsIsToldTheServerRequiresIt() {
        try (TcpStoreServer server = server(serverOnly(job))) {
            StoreException plain = refusedAtOnce(() -> client(server.getPort(), null).close());
            assertTrue(plain.getMessage().contains("requires TLS"), plain.getMessage());
            assertTrue(plain.getMessage().contains(StoreTls.CA_ENV), plain.getMessage());
            // with a store secret its first query is AUTH, not PING: told the same
            StoreException withSecret =
                    refusedAtOnce(() -> client(server.getPort(), null, "s3cret").close());
            assertTrue(withSecret.getMessage().contains("requires TLS"), withSecret.getMessage());
            assertEquals(0, server.numKeys());
        }
    }

    @Test
    void aPyTorchClientsPingIsNotEchoedAndNoQueryIsServed() throws Exception {
        try (TcpStoreServer server = server(serverOnly(job))) {
            try (RawClient raw = new RawClient(server.getPort())) {
                raw.validate();
                raw.u8(13).u32(1234); // PING, as PyTorch's client sends it
                long echo = raw.readU32();
                assertNotEquals(1234, echo, "a PyTorch client must fail its PING check");
                assertTrue(echo > (1L << 22), "no process id can be " + echo);
                assertTrue(raw.closedByServer());
            }
            try (RawClient raw = new RawClient(server.getPort())) {
                raw.validate();
                raw.u8(1).str("/k").str("v"); // SET straight away
                assertTrue(raw.closedByServer());
            }
            assertEquals(0, server.numKeys());
        }
    }

    @Test
    void aTlsClientAgainstAServerWithoutTlsFailsAtOnce() {
        try (TcpStoreServer plain = server(null)) {
            StoreException e = refusedAtOnce(() -> client(plain.getPort(), trusting(job)).close());
            assertTrue(e.getMessage().contains("TLS handshake"), e.getMessage());
            assertEquals(0, plain.numKeys());
        }
    }

    @Test
    void tlsAndASecretTogether() {
        StoreTls tls = mutual(job, job);
        try (TcpStoreServer server =
                TcpStoreServer.builder()
                        .optHost("127.0.0.1")
                        .optSecret("s3cret")
                        .optTls(tls)
                        .build()) {
            try (TcpStore ok = client(server.getPort(), tls, "s3cret")) {
                ok.set("k", VALUE);
                assertEquals(VALUE.length, ok.get("k").length);
            }
            StoreException wrong =
                    refusedAtOnce(() -> client(server.getPort(), tls, "wrong").close());
            assertTrue(wrong.getMessage().contains("secrets differ"), wrong.getMessage());
            // the right secret does not make up for a missing client certificate
            StoreException noCertificate =
                    refusedAtOnce(() -> client(server.getPort(), trusting(job), "s3cret").close());
            assertTrue(
                    noCertificate.getMessage().contains(StoreTls.CERT_ENV),
                    noCertificate.getMessage());
            assertEquals(1, server.numKeys());
        }
        // a client with a secret against a TLS server without one is told so, at once
        try (TcpStoreServer noSecret = server(tls)) {
            StoreException e =
                    refusedAtOnce(() -> client(noSecret.getPort(), tls, "s3cret").close());
            assertTrue(e.getMessage().contains("without a secret"), e.getMessage());
            assertEquals(0, noSecret.numKeys());
        }
    }

    /** A server with TLS and a read timeout of 300 ms. */
    private TcpStoreServer impatientServer() {
        return TcpStoreServer.builder()
                .optHost("127.0.0.1")
                .optSecret(null)
                .optTls(serverOnly(job))
                .optReadTimeout(Duration.ofMillis(300))
                .build();
    }

    @Test
    void aClientThatNeverStartsTlsIsClosedAtTheReadTimeout() throws Exception {
        try (TcpStoreServer server = impatientServer();
                RawClient silent = new RawClient(server.getPort())) {
            // RawClient reads for at most 10 s: a close well after the 300 ms read timeout fails
            assertTrue(silent.closedByServer(), "closed by the server");
        }
    }

    @Test
    void aClientThatStallsInTheTlsHandshakeIsClosedAtTheReadTimeout() throws Exception {
        try (TcpStoreServer server = impatientServer();
                RawClient stalled = new RawClient(server.getPort())) {
            // a TLS handshake record's header announcing 64 bytes, then nothing
            stalled.raw(new byte[] {0x16, 0x03, 0x01, 0x00, 0x40});
            assertTrue(stalled.closedByServer(), "closed by the server");
            assertEquals(0, server.numKeys());
        }
    }

    /**
     * Settings serve a server and connect its clients alike with a certificate, its key and the
     * authority; the benchmark's local warm-up needs both, a client machine holds the authority
     * alone.
     */
    @Test
    void settingsServeAndConnectWithACertificateItsKeyAndTheAuthority() {
        String chain = job.chain.toString();
        String key = job.key.toString();
        String ca = job.authority.toString();
        assertTrue(
                StoreTls.fromEnvironment(
                                Map.of(
                                        StoreTls.CERT_ENV, chain,
                                        StoreTls.KEY_ENV, key,
                                        StoreTls.CA_ENV, ca))
                        .servesAndConnects());
        assertFalse(StoreTls.fromEnvironment(Map.of(StoreTls.CA_ENV, ca)).servesAndConnects());
        assertFalse(
                StoreTls.fromEnvironment(Map.of(StoreTls.CERT_ENV, chain, StoreTls.KEY_ENV, key))
                        .servesAndConnects());
        assertFalse(
                StoreTls.fromEnvironment(
                                Map.of(
                                        StoreTls.CERT_ENV, chain,
                                        StoreTls.KEY_ENV, key,
                                        StoreTls.CA_ENV, ""))
                        .servesAndConnects());
    }

    @Test
    void settingsErrorsNameWhatIsMissing() throws IOException {
        IllegalArgumentException halfEnv =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                StoreTls.fromEnvironment(
                                        Map.of(StoreTls.CERT_ENV, job.chain.toString())));
        assertTrue(halfEnv.getMessage().contains(StoreTls.KEY_ENV), halfEnv.getMessage());
        assertNull(StoreTls.fromEnvironment(Map.of()));
        assertEquals(
                "StoreTls(provider="
                        + StoreTls.PROVIDER
                        + ", certificate=true, trusted=true, mutual=true)",
                StoreTls.fromEnvironment(
                                Map.of(
                                        StoreTls.CERT_ENV, job.chain.toString(),
                                        StoreTls.KEY_ENV, job.key.toString(),
                                        StoreTls.CA_ENV, job.authority.toString()))
                        .toString());

        Path missing = dir.resolve("missing.pem");
        IllegalArgumentException noFile =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                StoreTls.fromEnvironment(
                                        Map.of(StoreTls.CA_ENV, missing.toString())));
        assertTrue(noFile.getMessage().contains(missing.toString()), noFile.getMessage());
        assertTrue(noFile.getMessage().contains(StoreTls.CA_ENV), noFile.getMessage());

        Path garbage = Files.writeString(dir.resolve("garbage.pem"), "not a certificate\n");
        IllegalArgumentException notPem =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> StoreTls.builder().optCertificate(garbage, job.key).build());
        assertTrue(notPem.getMessage().contains(garbage.toString()), notPem.getMessage());

        IllegalArgumentException serverWithoutCertificate =
                assertThrows(IllegalArgumentException.class, () -> server(trusting(job)).close());
        assertTrue(
                serverWithoutCertificate.getMessage().contains(StoreTls.CERT_ENV),
                serverWithoutCertificate.getMessage());
        IllegalArgumentException clientWithoutAuthority =
                assertThrows(
                        IllegalArgumentException.class, () -> client(1, serverOnly(job)).close());
        assertTrue(
                clientWithoutAuthority.getMessage().contains(StoreTls.CA_ENV),
                clientWithoutAuthority.getMessage());
        assertThrows(IllegalArgumentException.class, () -> StoreTls.builder().build());
    }

    /** A TCP relay for one connection that records what the client sends. */
    private static final class Relay implements AutoCloseable {

        private final ServerSocket listener;
        private final ByteArrayOutputStream fromClient = new ByteArrayOutputStream();
        private final Thread acceptor;
        private volatile Socket client;
        private volatile Socket server;

        Relay(int target) throws IOException {
            listener = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            acceptor =
                    new Thread(
                            () -> {
                                try {
                                    client = listener.accept();
                                    server = new Socket(InetAddress.getLoopbackAddress(), target);
                                    pump(client.getInputStream(), server.getOutputStream(), true);
                                    pump(server.getInputStream(), client.getOutputStream(), false);
                                } catch (IOException e) {
                                    // closed by the test
                                }
                            },
                            "relay-accept");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        byte[] clientBytes() {
            synchronized (fromClient) {
                return fromClient.toByteArray();
            }
        }

        private void pump(InputStream in, OutputStream out, boolean record) {
            Thread t =
                    new Thread(
                            () -> {
                                byte[] buf = new byte[8192];
                                try {
                                    for (int n; (n = in.read(buf)) > 0; ) {
                                        if (record) {
                                            synchronized (fromClient) {
                                                fromClient.write(buf, 0, n);
                                            }
                                        }
                                        out.write(buf, 0, n);
                                        out.flush();
                                    }
                                } catch (IOException e) {
                                    // a side closed
                                }
                            },
                            "relay-pump");
            t.setDaemon(true);
            t.start();
        }

        @Override
        public void close() throws IOException {
            listener.close();
            for (Socket s : new Socket[] {client, server}) {
                if (s != null) {
                    s.close();
                }
            }
        }
    }
}
