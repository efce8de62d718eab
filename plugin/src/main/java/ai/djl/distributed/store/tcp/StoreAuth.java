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

import ai.djl.distributed.store.StoreException;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The authentication handshake of a store with a shared secret, an extension of PyTorch's protocol
 * that only this project's clients and servers speak (PyTorch's wire protocol is unchanged when no
 * secret is set). After VALIDATE:
 *
 * <pre>
 * client: AUTH (0xD5), version (1), client nonce (16 bytes)
 * server: AUTH (0xD5), server nonce (16 bytes)
 * client: HMAC-SHA256(secret, "djl-store-auth/client" | client nonce | server nonce)
 * server: ACCEPTED (0) and HMAC-SHA256(secret, "djl-store-auth/server" | client nonce | server
 *         nonce), or REFUSED (1) and closes
 * </pre>
 *
 * Each side proves it holds the secret without sending it; the proofs cover both nonces, so a
 * recorded handshake replayed on a new connection (a fresh server nonce) fails, and the two labels
 * keep one side's proof from being reflected as the other's. A server that requires a secret
 * answers a client that skips AUTH (PyTorch's, which sends PING) with {@link #AUTH_REQUIRED} in
 * place of the PING echo, then closes. Thread-safe: every method is stateless.
 */
final class StoreAuth {

    /** The query type of AUTH: outside PyTorch's range, so a server without a secret drops it. */
    static final int AUTH = 0xD5;

    /** The handshake's version. */
    static final int VERSION = 1;

    /** Bytes of each nonce. */
    static final int NONCE_BYTES = 16;

    /** Bytes of each proof (HMAC-SHA256). */
    static final int PROOF_BYTES = 32;

    /** The server accepted the client's proof. */
    static final int ACCEPTED = 0;

    /** The server refused the client's proof. */
    static final int REFUSED = 1;

    /**
     * What a server that requires a secret answers to a PING sent before AUTH: never a process id
     * (Linux caps those at 2^22), which PyTorch's and this project's clients send as the nonce.
     */
    static final long AUTH_REQUIRED = 0xFFFFD5A1L;

    /** The environment variable that holds the secret. */
    static final String ENV = "DJL_DIST_STORE_SECRET";

    private static final byte[] CLIENT_LABEL =
            "djl-store-auth/client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] SERVER_LABEL =
            "djl-store-auth/server".getBytes(StandardCharsets.US_ASCII);
    // Mac.getInstance looks the provider up each time: one instance per thread, keyed per use
    private static final ThreadLocal<Mac> MACS =
            ThreadLocal.withInitial(
                    () -> {
                        try {
                            return Mac.getInstance("HmacSHA256");
                        } catch (GeneralSecurityException e) {
                            // every Java platform must provide HmacSHA256
                            throw new StoreException("HmacSHA256 is not available: " + e, e);
                        }
                    });

    private StoreAuth() {}

    /**
     * Returns the secret of the environment ({@value #ENV}), or {@code null} if unset or empty.
     *
     * @return the secret's bytes
     */
    static byte[] fromEnvironment() {
        return of(System.getenv(ENV));
    }

    /**
     * Returns a secret's bytes (UTF-8), or {@code null} for {@code null} or an empty secret.
     *
     * @param secret the secret
     * @return its bytes, or {@code null} for none
     */
    static byte[] of(String secret) {
        return secret == null || secret.isEmpty() ? null : secret.getBytes(StandardCharsets.UTF_8);
    }

    static byte[] nonce() {
        byte[] nonce = new byte[NONCE_BYTES];
        Random.INSTANCE.nextBytes(nonce);
        return nonce;
    }

    /**
     * Holds the generator apart, so that a store without a secret never loads the JDK's security
     * configuration (a JDK whose {@code java.security} file is out of reach, as Debian's inside the
     * PyTorch peer's root, fails there).
     */
    private static final class Random {
        static final SecureRandom INSTANCE = new SecureRandom();
    }

    static byte[] clientProof(byte[] secret, byte[] clientNonce, byte[] serverNonce) {
        return hmac(secret, CLIENT_LABEL, clientNonce, serverNonce);
    }

    static byte[] serverProof(byte[] secret, byte[] clientNonce, byte[] serverNonce) {
        return hmac(secret, SERVER_LABEL, clientNonce, serverNonce);
    }

    /** Compares two proofs in time independent of where they differ. */
    static boolean matches(byte[] expected, byte[] actual) {
        return MessageDigest.isEqual(expected, actual);
    }

    private static byte[] hmac(byte[] secret, byte[] label, byte[] a, byte[] b) {
        try {
            Mac mac = MACS.get();
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update(label);
            mac.update(a);
            mac.update(b);
            return mac.doFinal();
        } catch (GeneralSecurityException e) {
            throw new StoreException("HmacSHA256 refused the secret as a key: " + e, e);
        }
    }
}
