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

import io.netty.buffer.ByteBufAllocator;
import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import javax.net.ssl.SSLException;

/**
 * TLS for a {@link TcpStore} and its {@link TcpStoreServer}: encryption of every key and value on
 * the wire, the server proven by its certificate, and, when the server trusts a certificate
 * authority, the clients proven by theirs (mutual TLS). An extension of PyTorch's protocol: a
 * PyTorch client cannot speak it, and a server with TLS refuses it at connect.
 *
 * <p>Every rank of a job usually holds the same three PEM files, which is what {@link
 * #fromEnvironment()} reads: a certificate chain and its private key (PKCS#8), presented by the
 * server and, for mutual TLS, by each client; and the certificates of the authority that signed
 * them, against which each side checks the other's chain. The host name is not checked against the
 * certificate: store addresses are often bare IPs, and a job's own authority signs only the job's
 * certificates. TLS 1.3, by the JDK; or by BoringSSL, much faster to shake hands, when the
 * application adds Netty's {@code netty-tcnative-boringssl-static} (this library does not).
 *
 * <p>Immutable and thread-safe; the PEM files are read once, by {@link Builder#build()}.
 */
public final class StoreTls {

    /** The environment variable naming the PEM certificate chain. */
    public static final String CERT_ENV = "DJL_DIST_STORE_TLS_CERT";

    /** The environment variable naming the PEM (PKCS#8) private key of the certificate. */
    public static final String KEY_ENV = "DJL_DIST_STORE_TLS_KEY";

    /** The environment variable naming the PEM certificates of the trusted authority. */
    public static final String CA_ENV = "DJL_DIST_STORE_TLS_CA";

    /**
     * What a server with TLS answers to a plaintext PING, in place of its echo: never a process id
     * (Linux caps those at 2^22), which PyTorch's and this project's clients send as the nonce.
     */
    static final long TLS_REQUIRED = 0xFFFFD5A2L;

    /** What a server with TLS answers to a plaintext AUTH, in place of the AUTH byte. */
    static final int TLS_REQUIRED_AUTH = 0xD6;

    // only this project's clients and servers speak it: no older version to be compatible with
    private static final String[] PROTOCOLS = {"TLSv1.3"};

    /**
     * BoringSSL when the application puts Netty's {@code netty-tcnative-boringssl-static} on the
     * class path (its handshakes cost a small fraction of the JDK's pure-Java elliptic curves: see
     * docs/PERFORMANCE.md), the JDK's TLS otherwise; this library never brings the native jar.
     */
    static final SslProvider PROVIDER =
            OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;

    private final SslProvider provider;
    private final SslContext server; // null without a certificate
    private final SslContext client; // null without trusted certificates

    private StoreTls(Builder b) {
        provider = b.provider;
        try {
            if (b.certificate != null) {
                SslContextBuilder s =
                        SslContextBuilder.forServer(b.certificate.toFile(), b.privateKey.toFile())
                                .sslProvider(b.provider)
                                .protocols(PROTOCOLS);
                if (b.trusted != null) {
                    s.trustManager(b.trusted.toFile()).clientAuth(ClientAuth.REQUIRE);
                }
                server = s.build();
            } else {
                server = null;
            }
            if (b.trusted != null) {
                SslContextBuilder c =
                        SslContextBuilder.forClient()
                                .sslProvider(b.provider)
                                .protocols(PROTOCOLS)
                                .trustManager(b.trusted.toFile())
                                // the job's authority is the check; addresses are often bare IPs
                                .endpointIdentificationAlgorithm(null);
                if (b.certificate != null) {
                    c.keyManager(b.certificate.toFile(), b.privateKey.toFile());
                }
                client = c.build();
            } else {
                client = null;
            }
        } catch (SSLException | IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "TLS files (certificate "
                            + b.certificate
                            + ", private key "
                            + b.privateKey
                            + ", trusted "
                            + b.trusted
                            + "): "
                            + e.getMessage()
                            + " (expected: a PEM certificate chain, its PEM PKCS#8 private key and"
                            + " PEM certificates of the authority)",
                    e);
        }
    }

    /**
     * Returns a builder.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the TLS settings of the environment: {@value #CERT_ENV} and {@value #KEY_ENV} (both
     * or neither), {@value #CA_ENV}.
     *
     * @return the settings, or {@code null} if none of the three is set
     * @throws IllegalArgumentException if only one of the certificate and its key is set, or a file
     *     cannot be read or parsed; the message names the variable
     */
    public static StoreTls fromEnvironment() {
        return fromEnvironment(System.getenv());
    }

    static StoreTls fromEnvironment(Map<String, String> env) {
        Path cert = path(env, CERT_ENV);
        Path key = path(env, KEY_ENV);
        Path ca = path(env, CA_ENV);
        if (cert == null && key == null && ca == null) {
            return null;
        }
        try {
            return builder().optCertificate(cert, key).optTrustedCertificates(ca).build();
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    CERT_ENV
                            + "="
                            + cert
                            + ", "
                            + KEY_ENV
                            + "="
                            + key
                            + ", "
                            + CA_ENV
                            + "="
                            + ca
                            + ": "
                            + e.getMessage(),
                    e);
        }
    }

    private static Path path(Map<String, String> env, String name) {
        String value = env.get(name);
        return value == null || value.isEmpty() ? null : Path.of(value);
    }

    /**
     * Whether these settings can serve a server and connect its clients alike: a certificate with
     * its key (a server's), and the authority (a client's). A server with them requires a
     * certificate of each client.
     *
     * @return whether both sides can be made of them
     */
    public boolean servesAndConnects() {
        return server != null && client != null;
    }

    /** Whether a server with these settings requires a certificate of each client. */
    boolean requiresClientCertificates() {
        return servesAndConnects();
    }

    /**
     * Returns a new server-side handler for one connection, of settings that passed {@link
     * #checkServer()}.
     */
    SslHandler newServerHandler(ByteBufAllocator alloc, Duration handshakeTimeout) {
        SslHandler ssl = server.newHandler(alloc);
        ssl.setHandshakeTimeoutMillis(Math.max(1, handshakeTimeout.toMillis()));
        return ssl;
    }

    /**
     * Returns a new client-side handler for one connection to {@code host:port}, first in the
     * pipeline of a client written on Netty (as the benchmarks' raw clients are); writes wait for
     * the handshake. {@link TcpStore} makes its own.
     *
     * @param alloc the channel's allocator
     * @param host the server's host, for the TLS session
     * @param port the server's port, for the TLS session
     * @param handshakeTimeout how long the handshake may take (a server busy with a rendezvous of
     *     thousands may take longer than Netty's 10 s default)
     * @return the handler
     * @throws IllegalArgumentException if these settings trust no authority
     */
    public SslHandler newClientHandler(
            ByteBufAllocator alloc, String host, int port, Duration handshakeTimeout) {
        checkClient();
        SslHandler ssl = client.newHandler(alloc, host, port);
        ssl.setHandshakeTimeoutMillis(Math.max(1, handshakeTimeout.toMillis()));
        return ssl;
    }

    /**
     * Returns the first TLS failure in a failure's causes.
     *
     * @param failure the failure
     * @return the {@link SSLException}, or {@code null} if none
     */
    static SSLException tlsCause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof SSLException) {
                return (SSLException) t;
            }
        }
        return null;
    }

    /** What a client without TLS is told by a server that requires it. */
    static String requiredBy(Object server) {
        return "the store server at "
                + server
                + " requires TLS, and this client has none: set "
                + CA_ENV
                + " (or TcpStore.Builder.optTls) to the authority of the server's certificate";
    }

    /** Checks that a client can use these settings. */
    void checkClient() {
        if (client == null) {
            throw new IllegalArgumentException(
                    "a TLS store client needs the certificates of the authority that signed the"
                            + " server's (StoreTls.Builder.optTrustedCertificates, or "
                            + CA_ENV
                            + ")");
        }
    }

    /** Checks that a server can use these settings. */
    void checkServer() {
        if (server == null) {
            throw new IllegalArgumentException(
                    "a TLS store server needs a certificate chain and its private key"
                            + " (StoreTls.Builder.optCertificate, or "
                            + CERT_ENV
                            + " and "
                            + KEY_ENV
                            + ")");
        }
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "StoreTls(provider="
                + provider
                + ", certificate="
                + (server != null)
                + ", trusted="
                + (client != null)
                + ", mutual="
                + requiresClientCertificates()
                + ")";
    }

    /** Configures {@link StoreTls}; at least one of the two options is required. */
    public static final class Builder {

        private Path certificate;
        private Path privateKey;
        private Path trusted;
        private SslProvider provider = PROVIDER;

        Builder() {}

        /** Picks the TLS implementation, for the tests of each; default {@link #PROVIDER}. */
        Builder provider(SslProvider provider) {
            this.provider = provider;
            return this;
        }

        /**
         * Sets the certificate chain (PEM, the leaf first) and its private key (PEM, PKCS#8) that a
         * server presents to its clients, and a client to a server that requires one.
         *
         * @param chain the certificate chain file
         * @param key the private key file
         * @return this builder
         */
        public Builder optCertificate(Path chain, Path key) {
            this.certificate = chain;
            this.privateKey = key;
            return this;
        }

        /**
         * Sets the certificates (PEM) of the authority that signs the job's certificates: a client
         * checks the server's chain against them, and a server that has them requires each client
         * to present a chain they sign (mutual TLS).
         *
         * @param authority the certificate file
         * @return this builder
         */
        public Builder optTrustedCertificates(Path authority) {
            this.trusted = authority;
            return this;
        }

        /**
         * Reads the files and builds the settings.
         *
         * @return the settings
         * @throws IllegalArgumentException if neither option is set, a file cannot be read, or its
         *     content is not what the option expects
         */
        public StoreTls build() {
            if (certificate == null && privateKey == null && trusted == null) {
                throw new IllegalArgumentException(
                        "StoreTls: no certificate and no trusted authority (expected: at least"
                                + " one)");
            }
            if ((certificate == null) != (privateKey == null)) {
                throw new IllegalArgumentException(
                        "certificate: "
                                + certificate
                                + ", private key: "
                                + privateKey
                                + " (expected: both, a certificate chain and its private key)");
            }
            readable("certificate", certificate);
            readable("private key", privateKey);
            readable("trusted certificates", trusted);
            return new StoreTls(this);
        }

        private static void readable(String what, Path file) {
            if (file != null && !Files.isReadable(file)) {
                throw new IllegalArgumentException(
                        what + ": " + file + " (expected: a readable PEM file)");
            }
        }
    }
}
