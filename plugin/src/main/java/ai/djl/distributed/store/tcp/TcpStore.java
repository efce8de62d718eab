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

import static ai.djl.distributed.store.tcp.WireKeys.toWire;

import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.Stores;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A store served over TCP, speaking PyTorch's TCPStore protocol (2.2 and later): the counterpart of
 * {@code torch.distributed.TCPStore}. A Java rank can share one store with Python ranks, join a job
 * whose store PyTorch (or torchrun's agent) serves, or serve one itself ({@link
 * Builder#optServer(boolean)}, usually on rank 0).
 *
 * <p>Keys go on the wire as PyTorch's client sends them: {@code "/" + key}, and the worker counter
 * as {@code init/}. Connecting retries refused connections with jittered exponential backoff until
 * the timeout, then checks the server with VALIDATE and PING. If the connection is lost, every
 * pending and later call fails with a {@link StoreException} naming the server.
 *
 * <p>Calls of one instance are serialised on its connection, as PyTorch's client does; use one
 * instance per thread for parallel traffic. Queues need a server that has them (this one, or
 * PyTorch's libuv server); PyTorch's legacy server drops the connection on a queue query.
 */
public final class TcpStore implements Store {

    private final String host;
    private final int port;
    private final TcpStoreServer server; // null unless this instance serves
    private final StoreClient client;
    private final Integer worldSize;
    private final AtomicBoolean closed = new AtomicBoolean();

    private TcpStore(Builder b) {
        this.worldSize = b.worldSize;
        this.host = b.host;
        TcpStoreServer started = null;
        if (b.server) {
            started = SharedServers.acquire(b.host, b.port, b.multiTenant, b.serverOptions);
        }
        this.server = started;
        this.port = started != null ? started.getPort() : b.port;
        try {
            String connectHost = started != null && isWildcard(b.host) ? "127.0.0.1" : b.host;
            StoreConnection connection =
                    StoreConnection.connect(connectHost, port, b.timeout, b.secret, b.tls);
            client = new StoreClient(toString(), connection, b.timeout);
        } catch (RuntimeException e) {
            if (started != null) {
                SharedServers.release(started);
            }
            throw e;
        }
        if (worldSize != null && b.waitForWorkers) {
            try {
                waitForWorkers();
            } catch (RuntimeException e) {
                close();
                throw e;
            }
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
     * Returns the server's host, as given to the builder.
     *
     * @return the host
     */
    public String getHost() {
        return host;
    }

    /**
     * Returns the server's port (the real one when this instance serves on port 0).
     *
     * @return the port
     */
    public int getPort() {
        return port;
    }

    /**
     * Returns whether this instance runs the server.
     *
     * @return {@code true} for the master instance
     */
    public boolean isServer() {
        return server != null;
    }

    /**
     * Counts this worker on the {@code init/} counter and, on the server instance, blocks until the
     * counter reaches the world size, polling every 10 ms as PyTorch does, for at most the store
     * timeout. The builder calls it unless {@link Builder#optWaitForWorkers} is false; call it once
     * per instance.
     *
     * @throws IllegalStateException if no world size was given
     * @throws StoreException naming how many workers joined, if they did not all come in time
     */
    public void waitForWorkers() {
        if (worldSize == null) {
            throw new IllegalStateException("waitForWorkers needs a world size (optWorldSize)");
        }
        long joined = rawAdd(StoreProtocol.INIT_KEY, 1);
        if (server == null) {
            return;
        }
        Duration limit = client.timeout();
        long deadline = Stores.deadline(limit);
        while (true) {
            if (joined >= worldSize) {
                return;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new StoreException(
                        "Timed out after "
                                + limit.toSeconds()
                                + " seconds waiting for clients. "
                                + joined
                                + "/"
                                + worldSize
                                + " clients joined.");
            }
            client.sleep(10);
            joined = rawAdd(StoreProtocol.INIT_KEY, 0);
        }
    }

    /** {@inheritDoc} */
    @Override
    public void set(String key, byte[] value) {
        Stores.checkValue("value", value);
        client.call(request(StoreOpcode.SET, List.of(toWire(key)), List.of(value)), ReplyType.NONE);
    }

    /** {@inheritDoc} */
    @Override
    public byte[] get(String key) {
        List<String> wireKey = List.of(toWire(key));
        // As PyTorch's client: WAIT first, so the GET never misses.
        return client.waitThenCall(
                List.of(key),
                wireKey,
                request(StoreOpcode.GET, wireKey, List.of()),
                ReplyType.BYTES);
    }

    /** {@inheritDoc} */
    @Override
    public long add(String key, long delta) {
        return rawAdd(toWire(key), delta);
    }

    private long rawAdd(String wireKey, long delta) {
        return client.call(
                new StoreRequest(StoreOpcode.ADD, List.of(wireKey), List.of(), delta),
                ReplyType.I64);
    }

    /** {@inheritDoc} */
    @Override
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        Stores.checkValue("expected", expected);
        Stores.checkValue("desired", desired);
        return client.call(
                request(StoreOpcode.COMPARE_SET, List.of(toWire(key)), List.of(expected, desired)),
                ReplyType.BYTES);
    }

    /** {@inheritDoc} */
    @Override
    public boolean deleteKey(String key) {
        long deleted =
                client.call(
                        request(StoreOpcode.DELETE_KEY, List.of(toWire(key)), List.of()),
                        ReplyType.I64);
        return deleted > 0;
    }

    /** {@inheritDoc} */
    @Override
    public boolean check(List<String> keys) {
        int reply = client.call(request(StoreOpcode.CHECK, toWire(keys), List.of()), ReplyType.U8);
        return reply == StoreProtocol.CHECK_READY;
    }

    /** {@inheritDoc} */
    @Override
    public void waitFor(List<String> keys, Duration timeout) {
        List<String> wireKeys = toWire(keys);
        Stores.checkTimeout(timeout);
        client.waitFor(keys, wireKeys, timeout);
    }

    /** {@inheritDoc} */
    @Override
    public long numKeys() {
        return client.call(request(StoreOpcode.GETNUMKEYS, List.of(), List.of()), ReplyType.I64);
    }

    /** {@inheritDoc} */
    @Override
    public void append(String key, byte[] value) {
        Stores.checkValue("value", value);
        client.call(
                request(StoreOpcode.APPEND, List.of(toWire(key)), List.of(value)), ReplyType.NONE);
    }

    /** {@inheritDoc} */
    @Override
    public List<byte[]> multiGet(List<String> keys) {
        List<String> wireKeys = toWire(keys);
        return client.waitThenCall(
                keys,
                wireKeys,
                request(StoreOpcode.MULTI_GET, wireKeys, List.of()),
                ReplyType.MULTI_BYTES);
    }

    /** {@inheritDoc} */
    @Override
    public void multiSet(List<String> keys, List<byte[]> values) {
        List<String> wireKeys = toWire(keys);
        Stores.checkSameSize(keys, values);
        client.call(request(StoreOpcode.MULTI_SET, wireKeys, values), ReplyType.NONE);
    }

    /** {@inheritDoc} */
    @Override
    public boolean hasExtendedApi() {
        return true;
    }

    /** {@inheritDoc} */
    @Override
    public void queuePush(String key, byte[] value) {
        Stores.checkValue("value", value);
        client.call(
                request(StoreOpcode.QUEUE_PUSH, List.of(toWire(key)), List.of(value)),
                ReplyType.NONE);
    }

    /** {@inheritDoc} */
    @Override
    public byte[] queuePop(String key) {
        return client.queuePop(key, toWire(key));
    }

    /** {@inheritDoc} */
    @Override
    public Optional<byte[]> queueTryPop(String key) {
        byte[][] popped =
                client.call(
                        request(StoreOpcode.QUEUE_POP, List.of(toWire(key)), List.of()),
                        ReplyType.QUEUE_POP);
        return popped.length == 1 ? Optional.of(popped[0]) : Optional.empty();
    }

    /** {@inheritDoc} */
    @Override
    public long queueLength(String key) {
        return client.call(
                request(StoreOpcode.QUEUE_LEN, List.of(toWire(key)), List.of()), ReplyType.I64);
    }

    /** {@inheritDoc} */
    @Override
    public Duration getTimeout() {
        return client.timeout();
    }

    /** {@inheritDoc} */
    @Override
    public void setTimeout(Duration timeout) {
        client.setTimeout(Stores.checkTimeout(timeout));
    }

    /**
     * Closes the connection and, if this instance serves, the server; idempotent. A call blocked on
     * another thread fails at once with a {@link StoreException} rather than delaying the close.
     */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        client.close();
        if (server != null) {
            SharedServers.release(server);
        }
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "TcpStore(" + host + ":" + port + (server != null ? ", server" : "") + ")";
    }

    private static StoreRequest request(StoreOpcode op, List<String> keys, List<byte[]> values) {
        return new StoreRequest(op, keys, values);
    }

    private static boolean isWildcard(String host) {
        return host.equals("0.0.0.0") || host.equals("::") || host.equals("[::]");
    }

    /**
     * Configures and opens a {@link TcpStore}; {@code setHost} and {@code setPort} are required.
     */
    public static final class Builder {

        private String host;
        private int port = -1;
        private Integer worldSize;
        private boolean server;
        private boolean waitForWorkers = true;
        private boolean multiTenant;
        private final TcpStoreServer.Builder serverOptions = TcpStoreServer.builder();
        private Duration timeout = DEFAULT_TIMEOUT;
        private String secret = System.getenv(StoreAuth.ENV);
        private StoreTls tls;
        private boolean tlsSet; // else build() reads the environment

        Builder() {}

        /**
         * Sets the store's TLS, for the client and for the server this instance starts, if any
         * ({@link TcpStoreServer.Builder#optTls}). The client checks the server's certificate
         * against the settings' trusted certificates, and presents the settings' own certificate to
         * a server that requires one; a server without TLS, an untrusted certificate or a refused
         * one fails {@link #build()} at once with a {@link StoreException} naming the cause.
         * Combine with {@link #optSecret} to keep clients without the secret out when the server
         * does not require client certificates. Default the environment ({@link
         * StoreTls#fromEnvironment()}); {@code null} for none (PyTorch's protocol exactly).
         *
         * @param tls the settings, with trusted certificates; or {@code null} for none
         * @return this builder
         */
        public Builder optTls(StoreTls tls) {
            this.tls = tls;
            this.tlsSet = true;
            serverOptions.optTls(tls);
            return this;
        }

        /**
         * Sets the store's shared secret, for the client and for the server this instance starts,
         * if any ({@link TcpStoreServer.Builder#optSecret}). Client and server prove it to each
         * other at connect, by HMAC-SHA256 over both sides' nonces, without sending it; a server
         * with another secret, or none, fails {@link #build()} with a {@link StoreException} naming
         * the cause. Default the environment variable {@code DJL_DIST_STORE_SECRET}; {@code null}
         * or empty for none (PyTorch's protocol exactly).
         *
         * @param secret the secret, or {@code null} for none
         * @return this builder
         */
        public Builder optSecret(String secret) {
            this.secret = secret;
            serverOptions.optSecret(secret);
            return this;
        }

        /**
         * Sets the server's host (for a server: the address to listen on).
         *
         * @param host a host name or address
         * @return this builder
         */
        public Builder setHost(String host) {
            this.host = host;
            return this;
        }

        /**
         * Sets the server's port; a server may use 0 to pick a free one.
         *
         * @param port 0 to 65535
         * @return this builder
         */
        public Builder setPort(int port) {
            this.port = port;
            return this;
        }

        /**
         * Sets the number of workers: with {@link #optWaitForWorkers} on, each instance adds itself
         * to the {@code init/} counter and the server instance waits for all of them.
         *
         * @param worldSize at least 1
         * @return this builder
         */
        public Builder optWorldSize(int worldSize) {
            this.worldSize = worldSize;
            return this;
        }

        /**
         * Makes this instance start the server (PyTorch's {@code is_master}); default false.
         *
         * @param server whether to serve
         * @return this builder
         */
        public Builder optServer(boolean server) {
            this.server = server;
            return this;
        }

        /**
         * Sets whether the instance counts itself on {@code init/} and, if it serves, waits for the
         * world size to join, as PyTorch's {@code wait_for_workers}; default true.
         *
         * @param waitForWorkers whether to wait
         * @return this builder
         */
        public Builder optWaitForWorkers(boolean waitForWorkers) {
            this.waitForWorkers = waitForWorkers;
            return this;
        }

        /**
         * Lets several server instances in this JVM share one server on the same port, as PyTorch's
         * {@code multi_tenant}; default false (a second bind fails).
         *
         * @param multiTenant whether to share
         * @return this builder
         */
        public Builder optMultiTenant(boolean multiTenant) {
            this.multiTenant = multiTenant;
            return this;
        }

        /**
         * Sets the event-loop threads of a server this instance starts; default half the cores,
         * from 1 to 4.
         *
         * @param threads at least 1
         * @return this builder
         */
        public Builder optServerIoThreads(int threads) {
            serverOptions.optIoThreads(threads);
            return this;
        }

        /**
         * Sets the memory that partly received requests may hold in a server this instance starts;
         * default 256 MiB. See {@link TcpStoreServer.Builder#optMaxPartialRequestBytes}.
         *
         * @param bytes at least twice the server's request limit (64 MiB), plus 1 MiB
         * @return this builder
         */
        public Builder optServerMaxPartialRequestBytes(long bytes) {
            serverOptions.optMaxPartialRequestBytes(bytes);
            return this;
        }

        /**
         * Sets the memory that MULTI_GET and LIST replies not yet sent may hold in a server this
         * instance starts; default 256 MiB. See {@link
         * TcpStoreServer.Builder#optMaxQueuedReplyBytes}.
         *
         * @param bytes at least the server's request limit (64 MiB)
         * @return this builder
         */
        public Builder optServerMaxQueuedReplyBytes(long bytes) {
            serverOptions.optMaxQueuedReplyBytes(bytes);
            return this;
        }

        /**
         * Sets how long one request may stay partly received in a server this instance starts;
         * default 30 s. See {@link TcpStoreServer.Builder#optReadTimeout}.
         *
         * @param readTimeout a positive duration
         * @return this builder
         */
        public Builder optServerReadTimeout(Duration readTimeout) {
            serverOptions.optReadTimeout(readTimeout);
            return this;
        }

        /**
         * Sets the timeout of connecting and of blocking calls; default 300 s.
         *
         * @param timeout a positive duration
         * @return this builder
         */
        public Builder optTimeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * Validates the settings, starts the server if asked, connects and counts this worker.
         *
         * @return the connected store
         * @throws IllegalArgumentException if a setting is missing or out of range
         * @throws StoreException if the server cannot be reached or started in time
         */
        public TcpStore build() {
            if (host == null || host.isEmpty()) {
                throw new IllegalArgumentException(
                        "host: '" + host + "' (expected: a host name or address)");
            }
            if (port < 0 || port > 65535 || (port == 0 && !server)) {
                throw new IllegalArgumentException(
                        "port: " + port + " (expected: 1 to 65535, or 0 for a server)");
            }
            if (worldSize != null && worldSize < 1) {
                throw new IllegalArgumentException(
                        "worldSize: "
                                + worldSize
                                + " (expected: at least 1; TCPStore world size cannot be 0)");
            }
            serverOptions.validateLimits();
            Stores.checkTimeout(timeout);
            if (!tlsSet) {
                optTls(StoreTls.fromEnvironment());
            }
            if (tls != null) {
                tls.checkClient();
            }
            if (server) {
                serverOptions.resolveTls();
            }
            return new TcpStore(this);
        }
    }
}
