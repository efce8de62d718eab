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

import ai.djl.distributed.store.StoreException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Arrays;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The authenticated store: the shared secret's handshake against right, wrong and missing secrets,
 * a replayed handshake, and clients that skip it. Proofs are computed here with the JDK's HMAC from
 * the handshake's published definition, not with the code under test.
 */
@Timeout(60)
class TcpStoreAuthTest {

    private static final String SECRET = "correct horse battery staple";
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private TcpStoreServer server;

    @BeforeEach
    void start() {
        server = TcpStoreServer.builder().optHost("127.0.0.1").optSecret(SECRET).build();
    }

    @AfterEach
    void stop() {
        server.close();
    }

    private TcpStore client(String secret) {
        return client(server.getPort(), secret);
    }

    private static TcpStore client(int port, String secret) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(port)
                .optTimeout(TIMEOUT)
                .optSecret(secret)
                .build();
    }

    @Test
    void theSameSecretServesKeys() {
        try (TcpStore a = client(SECRET);
                TcpStore b = client(SECRET)) {
            a.set("k", "v".getBytes(StandardCharsets.UTF_8));
            assertEquals("v", new String(b.get("k"), StandardCharsets.UTF_8));
            assertEquals(3, b.add("n", 3));
            assertEquals(2, server.numKeys());
        }
    }

    @Test
    void aWrongSecretIsRefusedAtOnceAndSeesNoKey() {
        try (TcpStore good = client(SECRET)) {
            good.set("k", new byte[] {1});
        }
        long start = System.nanoTime();
        StoreException e = assertThrows(StoreException.class, () -> client("wrong"));
        assertTrue(e.getMessage().contains("secrets differ"), e.getMessage());
        // no retries until the timeout: the failure is final
        assertTrue(System.nanoTime() - start < TIMEOUT.toNanos() / 2);
        assertEquals(1, server.numKeys());
    }

    @Test
    void aClientWithoutTheSecretIsToldItNeedsOne() {
        StoreException e = assertThrows(StoreException.class, () -> client(null));
        assertTrue(e.getMessage().contains("requires a store secret"), e.getMessage());
        assertTrue(e.getMessage().contains("DJL_DIST_STORE_SECRET"), e.getMessage());
    }

    @Test
    void aSecretAgainstAServerWithoutOneFails() {
        try (TcpStoreServer open = TcpStoreServer.builder().optHost("127.0.0.1").build()) {
            StoreException e =
                    assertThrows(StoreException.class, () -> client(open.getPort(), SECRET));
            assertTrue(e.getMessage().contains("without a secret"), e.getMessage());
            assertEquals(0, open.numKeys());
        }
    }

    @Test
    void aReplayedHandshakeIsRefused() throws Exception {
        byte[] clientNonce = new byte[16];
        new SecureRandom().nextBytes(clientNonce);
        byte[] recordedProof;
        try (RawClient first = new RawClient(server.getPort())) {
            hello(first, clientNonce);
            byte[] serverNonce = serverNonce(first);
            recordedProof = hmac("djl-store-auth/client", clientNonce, serverNonce);
            first.raw(recordedProof);
            assertEquals(0, first.readU8()); // ACCEPTED
            assertArrayEquals(
                    hmac("djl-store-auth/server", clientNonce, serverNonce),
                    first.readBytes(32),
                    "the server proves the secret too");
            first.u8(1).str("/k").str("v"); // SET, now allowed
            first.u8(7); // GETNUMKEYS
            assertEquals(1, first.readI64());
        }
        try (RawClient replay = new RawClient(server.getPort())) {
            hello(replay, clientNonce);
            byte[] serverNonce = serverNonce(replay);
            assertFalse(Arrays.equals(clientNonce, serverNonce));
            replay.raw(recordedProof); // the proof of the first connection's nonces
            replay.u8(3).str("/k"); // GET: must never be answered
            assertEquals(1, replay.readU8()); // REFUSED
            assertTrue(replay.closedByServer());
        }
        assertEquals(1, server.numKeys());
    }

    @Test
    void queriesBeforeAuthenticationAreNeverServed() throws Exception {
        try (TcpStore good = client(SECRET)) {
            good.set("k", new byte[] {42});
        }
        try (RawClient raw = new RawClient(server.getPort())) {
            raw.validate();
            raw.u8(3).str("/k"); // GET without AUTH
            assertTrue(raw.closedByServer(), "closed without a reply");
        }
        try (RawClient raw = new RawClient(server.getPort())) {
            raw.validate();
            raw.u8(13).u32(1234); // PING, as PyTorch's client sends it
            assertEquals(StoreAuth.AUTH_REQUIRED, raw.readU32());
            assertTrue(raw.closedByServer());
        }
        assertEquals(1, server.numKeys());
    }

    private static void hello(RawClient raw, byte[] clientNonce) throws Exception {
        raw.validate();
        raw.u8(0xD5).u8(1).raw(clientNonce); // AUTH, version 1
    }

    private static byte[] serverNonce(RawClient raw) throws Exception {
        assertEquals(0xD5, raw.readU8());
        return raw.readBytes(16);
    }

    private static byte[] hmac(String label, byte[] a, byte[] b) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(SECRET.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update(label.getBytes(StandardCharsets.US_ASCII));
        mac.update(a);
        mac.update(b);
        return mac.doFinal();
    }
}
