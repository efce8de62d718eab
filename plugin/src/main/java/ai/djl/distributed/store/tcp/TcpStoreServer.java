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
import ai.djl.distributed.store.Stores;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.util.concurrent.GlobalEventExecutor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * A TCPStore server: PyTorch's protocol on Netty. All connections share a few event-loop threads
 * and one key space; a WAIT is answered by the write that satisfies it, never by polling. On
 * io_uring, a connection without TLS or a secret is served straight from the event loop's
 * completions while it sends the common queries, and through its channel's pipeline from the first
 * other request on ({@link Builder#optDirectConnections}).
 *
 * <p>Limits on key size, request size and key count close a connection that exceeds them, with a
 * logged reason, so a hostile or broken client cannot exhaust the server's memory or disturb the
 * other clients. So do two limits on requests that arrive slowly: the memory that partly received
 * requests hold across all connections ({@link Builder#optMaxPartialRequestBytes}), and how long
 * one request may stay partly received ({@link Builder#optReadTimeout}). A connection idle between
 * requests, or blocked in a WAIT, holds nothing and is never timed out. {@link #close()} stops the
 * server and drops every connection; it is idempotent.
 *
 * <p>Most users get a server through {@link TcpStore.Builder#optServer(boolean)}; this class is for
 * a standalone server ({@code bin/djl-dist store-server}).
 */
public final class TcpStoreServer implements AutoCloseable {

    /** The default busy-poll window after each event: a few loopback round trips. */
    public static final Duration DEFAULT_BUSY_POLL = Duration.ofNanos(50_000);

    /**
     * The most connections at which the event loops busy-poll: beyond, polls find work without
     * spinning, and the clients (often on the same cores) need the CPU.
     */
    static final int BUSY_POLL_MAX_CONNECTIONS = 8;

    /**
     * The system property that sets {@link Builder#optDirectConnections}'s default: {@code false}
     * serves every connection through its channel's pipeline.
     */
    public static final String DIRECT_PROPERTY = "ai.djl.distributed.store.direct";

    /** The default warm-up of a standalone server ({@code bin/djl-dist store-server}). */
    public static final Duration DEFAULT_WARM_UP = Duration.ofMillis(1500);

    /** The largest request limit: a request's value is one Java array. */
    public static final long MAX_REQUEST_BYTES = Stores.MAX_VALUE_BYTES;

    /**
     * What the partial-request budget needs beyond twice the request limit: room for the read
     * buffer and the request's bookkeeping (see {@link Builder#optMaxPartialRequestBytes}).
     */
    static final long PARTIAL_REQUEST_SLACK = 1 << 20;

    private static final Logger logger = LoggerFactory.getLogger(TcpStoreServer.class);

    private final StoreState state = new StoreState();
    private final MemoryBudget budget;
    private final MemoryBudget replyBudget;
    // every client connection, so close() can end them all before the loops stop
    private final ChannelGroup clients = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
    // the connections served straight from io_uring, which have left their channels (and clients)
    private final Set<IoUringConnection> direct = ConcurrentHashMap.newKeySet();
    private final EventLoopGroup acceptor;
    private final EventLoopGroup workers;
    private Channel channel;
    private final InetSocketAddress address;
    private volatile boolean closed;

    private TcpStoreServer(Builder builder) {
        budget = new MemoryBudget(builder.partialRequestBudget());
        replyBudget = new MemoryBudget(builder.queuedReplyBudget());
        // A thread of its own accepts: at a rendezvous of thousands, accepting on the loop that
        // also serves them let the accept queue (somaxconn) overflow, and the kernel reset the
        // connections it could not queue; it also halved the time of 9,000 clients here.
        acceptor = NettyTransport.newGroup(1, "djl-store-accept");
        try {
            workers =
                    NettyTransport.newServerGroup(
                            builder.ioThreads,
                            "djl-store-server",
                            builder.busyPollNanos,
                            () -> clients.size() + direct.size(),
                            BUSY_POLL_MAX_CONNECTIONS);
        } catch (RuntimeException e) { // the acceptor's thread and ring are not to outlive this
            acceptor.shutdownGracefully(0, 0, TimeUnit.SECONDS);
            throw e;
        }
        try {
            channel =
                    bind(
                            builder,
                            builder.host,
                            builder.port,
                            state,
                            budget,
                            replyBudget,
                            clients,
                            direct,
                            builder.secret,
                            builder.tls);
            address = (InetSocketAddress) channel.localAddress();
            logGuards(builder);
            if (builder.warmUp.compareTo(Duration.ZERO) > 0) {
                warmUp(builder);
            }
        } catch (Exception e) { // Netty rethrows bind's checked IOException unchecked
            if (channel != null) {
                channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
            }
            shutdownGroups();
            throw new StoreException(
                    "The server socket has failed to listen on "
                            + builder.host
                            + ":"
                            + builder.port
                            + ": "
                            + e.getMessage(),
                    e);
        }
    }

    // An optimisation only: a warm-up that fails (a loaded host's timeouts, limits its load
    // passes) leaves a server that serves, compiling as it goes.
    private void warmUp(Builder builder) {
        long start = System.nanoTime();
        try {
            ServerWarmUp.run(this, builder);
        } catch (RuntimeException e) {
            logger.warn("{}: warm-up failed, serving without it: {}", this, e.getMessage());
            logger.debug("{}: the warm-up's failure", this, e);
            return;
        }
        logger.info(
                "{}: warmed up in {} ms",
                this,
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }

    // What keeps strangers out, once at start, so an operator sees it beside "listening"
    private void logGuards(Builder builder) {
        StoreTls tls = builder.tls;
        boolean secret = builder.secret != null;
        if (tls == null && !secret) {
            return;
        }
        boolean certificates = tls != null && tls.requiresClientCertificates();
        logger.info(
                "{}: {}, {}{}",
                this,
                tls == null
                        ? "no TLS"
                        : certificates
                                ? "TLS, client certificates required"
                                : "TLS, no client certificates",
                secret ? "store secret required" : "no store secret",
                certificates || secret ? "" : " (any TLS client may read and write keys)");
    }

    /**
     * Binds a listener on this server's event loops whose connections serve {@code keys}: the
     * server's own, or the scratch state of a warm-up; with TLS settings, each connection must
     * start TLS first ({@link StoreTlsServerHandler}); with a secret, it must then pass {@link
     * StoreAuth}'s handshake. With neither, and io_uring, a connection is served straight from
     * io_uring ({@link IoUringConnection}, kept in {@code plain}) until it sends a request that
     * only the pipeline serves, unless the builder turned that off.
     */
    Channel bind(
            Builder builder,
            String host,
            int port,
            StoreState keys,
            MemoryBudget partials,
            MemoryBudget replies,
            ChannelGroup connections,
            Set<IoUringConnection> plain,
            byte[] secret,
            StoreTls tls) {
        boolean straight =
                builder.direct
                        && tls == null
                        && secret == null
                        && "io_uring".equals(NettyTransport.name());
        WriteBufferWaterMark watermark = new WriteBufferWaterMark(512 * 1024, 2 * 1024 * 1024);
        ChannelInitializer<Channel> initializer =
                new ChannelInitializer<Channel>() {
                    @Override
                    protected void initChannel(Channel ch) {
                        connections.add(ch);
                        if (tls != null) {
                            ch.pipeline()
                                    .addLast(new StoreTlsServerHandler(tls, builder.readTimeout));
                        }
                        if (secret != null) {
                            ch.pipeline()
                                    .addLast(
                                            new StoreAuthServerHandler(
                                                    secret, builder.readTimeout, tls != null));
                        }
                        StoreRequestDecoder decoder =
                                new StoreRequestDecoder(
                                        builder.maxKeyBytes,
                                        builder.maxRequestBytes,
                                        builder.maxKeys,
                                        partials,
                                        builder.readTimeout);
                        if (IoUringConnection.handedOverValidated(ch)) {
                            decoder.markValidated();
                        }
                        StoreServerHandler server =
                                new StoreServerHandler(
                                        keys,
                                        builder.maxRequestBytes,
                                        replies,
                                        builder.readTimeout);
                        ch.pipeline()
                                .addLast(
                                        new InPlaceRequests(
                                                decoder,
                                                server,
                                                builder.maxKeyBytes,
                                                builder.maxRequestBytes))
                                .addLast(decoder)
                                .addLast(server);
                    }
                };
        ServerBootstrap bootstrap =
                new ServerBootstrap()
                        .group(acceptor, workers)
                        .channel(NettyTransport.serverChannel())
                        .option(ChannelOption.SO_BACKLOG, builder.backlog)
                        .option(ChannelOption.SO_REUSEADDR, true)
                        .childOption(ChannelOption.TCP_NODELAY, true)
                        // past 2 MiB of unsent replies a client is not reading: stop reading it
                        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, watermark)
                        .childHandler(initializer);
        if (straight) {
            // takes each connection before the bootstrap registers it: its channel and pipeline
            // are made only if it is handed back
            bootstrap.handler(
                    new IoUringAcceptor(
                            workers,
                            ch -> {
                                ch.config().setOption(ChannelOption.TCP_NODELAY, true);
                                ch.config().setWriteBufferWaterMark(watermark);
                            },
                            initializer,
                            keys,
                            builder.maxKeyBytes,
                            builder.maxRequestBytes,
                            plain,
                            builder.readTimeout));
        }
        return bootstrap.bind(host, port).syncUninterruptibly().channel();
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
     * Returns the port the server listens on (the real one when port 0 was asked for).
     *
     * @return the port
     */
    public int getPort() {
        return address.getPort();
    }

    /**
     * Returns the address the server listens on.
     *
     * @return the bound address
     */
    public InetSocketAddress getAddress() {
        return address;
    }

    /**
     * Returns how many clients have added themselves to the {@code init/} worker counter.
     *
     * @return the counter, or 0 if no client has counted itself yet
     */
    public long joinedWorkers() {
        byte[] value = state.get(StoreProtocol.INIT_KEY);
        return value == null ? 0 : Stores.parseCounter(toString(), StoreProtocol.INIT_KEY, value);
    }

    /**
     * Returns the number of keys the server holds.
     *
     * @return the key count, {@code init/} included
     */
    public long numKeys() {
        return state.numKeys();
    }

    /**
     * Returns the memory that partly received requests hold now, across all connections: what the
     * {@link Builder#optMaxPartialRequestBytes budget} counts. Never above the budget.
     *
     * @return the bytes held, 0 when every connection is between requests
     */
    public long partialRequestBytes() {
        return budget.held();
    }

    /**
     * Returns the memory that MULTI_GET and LIST replies not yet sent hold now, across all
     * connections: what the {@link Builder#optMaxQueuedReplyBytes budget} counts. Never above it.
     *
     * @return the bytes held, 0 when every such reply has been sent
     */
    public long queuedReplyBytes() {
        return replyBudget.held();
    }

    /**
     * Returns how many connections are served straight from io_uring now, without a pipeline.
     *
     * @return the count, 0 when {@link Builder#optDirectConnections} is off or does not apply
     */
    int directConnections() {
        return direct.size();
    }

    /**
     * Returns how many WAITs are registered on a key now, for tests.
     *
     * @param key the key as on the wire
     * @return the registrations on it, 0 if none
     */
    int waitingOn(String key) {
        return state.waitingOn(key);
    }

    /**
     * Returns whether the server has been closed.
     *
     * @return {@code true} after {@link #close()}
     */
    public boolean isClosed() {
        return closed;
    }

    /** Stops listening, closes every connection and stops the threads. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        channel.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        IoUringConnection.closeAll(direct, 5000);
        clients.close().awaitUninterruptibly(5, TimeUnit.SECONDS);
        shutdownGroups();
    }

    private void shutdownGroups() {
        acceptor.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        acceptor.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
        workers.terminationFuture().awaitUninterruptibly(5, TimeUnit.SECONDS);
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "TcpStoreServer(" + address.getHostString() + ":" + getPort() + ")";
    }

    /** Configures and starts a {@link TcpStoreServer}. */
    public static final class Builder {

        private static final long UNSET = Long.MIN_VALUE;

        private String host = "0.0.0.0";
        private int port;
        // half the cores, at most 4: the clients (often on the same host) need the rest
        private int ioThreads =
                Math.max(1, Math.min(4, Runtime.getRuntime().availableProcessors() / 2));
        private int backlog = 65535;
        private long busyPollNanos = DEFAULT_BUSY_POLL.toNanos();
        private Duration warmUp = Duration.ZERO;
        private byte[] secret = StoreAuth.fromEnvironment();
        private StoreTls tls;
        private boolean tlsSet; // else build() reads the environment
        private int maxKeyBytes = StoreProtocol.DEFAULT_MAX_KEY_BYTES;
        private long maxRequestBytes = StoreProtocol.DEFAULT_MAX_REQUEST_BYTES;
        private int maxKeys = StoreProtocol.DEFAULT_MAX_KEYS;
        // UNSET: the default, or what the request limit needs if that is more
        private long maxPartialRequestBytes = UNSET;
        private long maxQueuedReplyBytes = UNSET;
        private Duration readTimeout = StoreProtocol.DEFAULT_READ_TIMEOUT;
        private boolean direct = Boolean.parseBoolean(System.getProperty(DIRECT_PROPERTY, "true"));

        Builder() {}

        /**
         * Sets the address to listen on; default {@code 0.0.0.0}, every interface.
         *
         * @param host a host name or address
         * @return this builder
         */
        public Builder optHost(String host) {
            this.host = host;
            return this;
        }

        /**
         * Sets the port; 0 (the default) picks a free one, see {@link TcpStoreServer#getPort()}.
         *
         * @param port 0 to 65535
         * @return this builder
         */
        public Builder optPort(int port) {
            this.port = port;
            return this;
        }

        /**
         * Sets the number of event-loop threads serving connections; default half the cores, at
         * least 1 and at most 4.
         *
         * @param ioThreads at least 1
         * @return this builder
         */
        public Builder optIoThreads(int ioThreads) {
            this.ioThreads = ioThreads;
            return this;
        }

        /**
         * Sets the listen backlog (the kernel caps it at net.core.somaxconn); default 65535, so the
         * kernel's own cap applies.
         *
         * @param backlog at least 1
         * @return this builder
         */
        public Builder optBacklog(int backlog) {
            this.backlog = backlog;
            return this;
        }

        /**
         * Sets how long an event loop keeps polling without blocking after its last event, default
         * 50 us; {@code Duration.ZERO} blocks at once. Each loop spins only while traffic is that
         * recent, so an idle server costs nothing, and a busy one answers the next request of a
         * client without a thread wake-up (io_uring and epoll; NIO blocks at once).
         *
         * @param busyPoll zero or a positive duration
         * @return this builder
         */
        public Builder optBusyPoll(Duration busyPoll) {
            if (busyPoll == null || busyPoll.isNegative()) {
                throw new IllegalArgumentException(
                        "busyPoll: " + busyPoll + " (expected: zero or a positive duration)");
            }
            this.busyPollNanos = busyPoll.toNanos();
            return this;
        }

        /**
         * Sets how long the server serves an internal load through its own code path before {@link
         * #build()} returns: a scratch key space on a second loopback listener, closed afterwards,
         * so the real keys are untouched and no client can see it. The JIT compiles the request
         * path meanwhile, and the server is at full speed from its first request instead of after
         * some 100,000 of them. A warm-up that fails (its clients time out on a loaded host, say)
         * is logged at WARN, and the server starts anyway. Default {@code Duration.ZERO}, none: a
         * server embedded in a job's rank 0 or a test should start at once; {@code bin/djl-dist
         * store-server} uses {@link #DEFAULT_WARM_UP}.
         *
         * @param warmUp zero or a positive duration
         * @return this builder
         */
        public Builder optWarmUp(Duration warmUp) {
            if (warmUp == null || warmUp.isNegative()) {
                throw new IllegalArgumentException(
                        "warmUp: " + warmUp + " (expected: zero or a positive duration)");
            }
            this.warmUp = warmUp;
            return this;
        }

        /**
         * Sets the store's shared secret: every client must then prove it holds the same secret at
         * connect ({@link TcpStore.Builder#optSecret}), or is refused before it can read or write a
         * key, with a WARN here naming it. The secret itself never crosses the wire. Default the
         * environment variable {@code DJL_DIST_STORE_SECRET}; {@code null} or empty for none, which
         * keeps PyTorch's protocol exactly (PyTorch's clients cannot authenticate).
         *
         * @param secret the secret, or {@code null} for none
         * @return this builder
         */
        public Builder optSecret(String secret) {
            this.secret = StoreAuth.of(secret);
            return this;
        }

        /**
         * Sets the server's TLS: it then presents the settings' certificate to every client, and
         * refuses, with a WARN here naming it, a client that does not start TLS (PyTorch's clients
         * cannot) or whose handshake fails; with trusted certificates in the settings it also
         * requires each client's certificate (mutual TLS). Default the environment ({@link
         * StoreTls#fromEnvironment()}); {@code null} for none, which keeps PyTorch's protocol.
         *
         * @param tls the settings, with a certificate; or {@code null} for none
         * @return this builder
         */
        public Builder optTls(StoreTls tls) {
            this.tls = tls;
            this.tlsSet = true;
            return this;
        }

        /**
         * Sets the largest key accepted, in bytes; default 64 KiB.
         *
         * @param maxKeyBytes at least 1
         * @return this builder
         */
        public Builder optMaxKeyBytes(int maxKeyBytes) {
            this.maxKeyBytes = maxKeyBytes;
            return this;
        }

        /**
         * Sets the most key and value bytes one request may carry; default 64 MiB. It also bounds
         * every reply (a MULTI_GET or LIST past it closes its connection, with a WARN) and every
         * value (an APPEND past it too). The two memory budgets, where not set, grow with it
         * ({@link #optMaxPartialRequestBytes}, {@link #optMaxQueuedReplyBytes}).
         *
         * @param maxRequestBytes 1 to {@link TcpStoreServer#MAX_REQUEST_BYTES}
         * @return this builder
         */
        public Builder optMaxRequestBytes(long maxRequestBytes) {
            this.maxRequestBytes = maxRequestBytes;
            return this;
        }

        /**
         * Sets the most keys one request may name; default 131072.
         *
         * @param maxKeys at least 1
         * @return this builder
         */
        public Builder optMaxKeys(int maxKeys) {
            this.maxKeys = maxKeys;
            return this;
        }

        /**
         * Sets the most memory that partly received requests may hold together, across all
         * connections; default 256 MiB, or twice the request limit plus 1 MiB if that is more. A
         * request that spans several reads holds its keys, its values (a value still arriving
         * counts for its array, which grows with the bytes received, never for the length it
         * announced) and the bytes of a field still arriving. A connection whose request would take
         * the total past this budget is closed, with a WARN naming it, the bytes and the budget;
         * the others are unaffected. A value's array grows by copying, and the copy holds the old
         * array beside the new one, so a request of one value at the limit that arrives in parts
         * needs about twice the limit while it does.
         *
         * @param maxPartialRequestBytes at least twice the {@link #optMaxRequestBytes request
         *     limit}, plus 1 MiB for the read buffer and bookkeeping
         * @return this builder
         */
        public Builder optMaxPartialRequestBytes(long maxPartialRequestBytes) {
            this.maxPartialRequestBytes = maxPartialRequestBytes;
            return this;
        }

        /**
         * Sets the most memory that MULTI_GET and LIST replies not yet sent may hold together,
         * across all connections; default 256 MiB, or the request limit if that is more. Such a
         * reply is built whole (its size bounded by the request limit), and a request of a few
         * bytes per key can ask for much more than it sent: one key named 100,000 times. A reply's
         * claim is given back once it is sent or its connection ends. A request whose reply would
         * take the total past this budget waits, with the requests its connection sends after it,
         * until replies are sent and free enough of it; one that waits past the {@link
         * #optReadTimeout read timeout} closes its connection, with a WARN naming it, the bytes and
         * the budget. Other requests do not wait for it.
         *
         * @param maxQueuedReplyBytes at least the {@link #optMaxRequestBytes request limit}, the
         *     largest reply
         * @return this builder
         */
        public Builder optMaxQueuedReplyBytes(long maxQueuedReplyBytes) {
            this.maxQueuedReplyBytes = maxQueuedReplyBytes;
            return this;
        }

        /**
         * Sets how long one request may stay partly received, from the moment it first waits for
         * more bytes; default 30 s. A connection whose request is still incomplete then is closed,
         * with a WARN. Connections idle between requests, or blocked in a WAIT, are never closed.
         *
         * @param readTimeout a positive duration
         * @return this builder
         */
        public Builder optReadTimeout(Duration readTimeout) {
            this.readTimeout = readTimeout;
            return this;
        }

        /**
         * Sets whether plain connections (no TLS, no secret) are served straight from io_uring: the
         * queries of a job's steady state (SET, GET, ADD, and CHECK or WAIT on one key), sent one
         * at a time, are then answered by the event loop's completions without a channel pipeline,
         * about a microsecond less of the server's time each; the first other request moves the
         * connection to its pipeline for good. Default on, or the system property {@link
         * #DIRECT_PROPERTY}; it applies only where the transport is io_uring ({@link
         * NettyTransport}).
         *
         * @param direct {@code false} to serve every connection through its pipeline
         * @return this builder
         */
        public Builder optDirectConnections(boolean direct) {
            this.direct = direct;
            return this;
        }

        long warmUpNanos() {
            return warmUp.toNanos();
        }

        /**
         * Validates the settings and starts the server.
         *
         * @return the listening server
         * @throws IllegalArgumentException if a setting is out of range
         * @throws StoreException if the port cannot be bound
         */
        public TcpStoreServer build() {
            if (host == null || host.isEmpty()) {
                throw new IllegalArgumentException(
                        "host: '" + host + "' (expected: a host name or address)");
            }
            if (port < 0 || port > 65535) {
                throw new IllegalArgumentException("port: " + port + " (expected: 0 to 65535)");
            }
            validateLimits();
            resolveTls();
            return new TcpStoreServer(this);
        }

        // The partial-request budget: as set, else the default or what the request limit needs.
        long partialRequestBudget() {
            return maxPartialRequestBytes != UNSET
                    ? maxPartialRequestBytes
                    : Math.max(
                            StoreProtocol.DEFAULT_MAX_PARTIAL_REQUEST_BYTES,
                            2 * maxRequestBytes + PARTIAL_REQUEST_SLACK);
        }

        // The reply budget: as set, else the default or the request limit if that is more.
        long queuedReplyBudget() {
            return maxQueuedReplyBytes != UNSET
                    ? maxQueuedReplyBytes
                    : Math.max(StoreProtocol.DEFAULT_MAX_QUEUED_REPLY_BYTES, maxRequestBytes);
        }

        /**
         * Checks every setting but the address, for {@link TcpStore.Builder#build()}.
         *
         * @throws IllegalArgumentException if a setting is out of range
         */
        void validateLimits() {
            checkPositive("ioThreads", ioThreads);
            checkPositive("backlog", backlog);
            checkPositive("maxKeyBytes", maxKeyBytes);
            checkPositive("maxRequestBytes", maxRequestBytes);
            if (maxRequestBytes > MAX_REQUEST_BYTES) {
                throw new IllegalArgumentException(
                        "maxRequestBytes: "
                                + maxRequestBytes
                                + " (expected: 1 to "
                                + MAX_REQUEST_BYTES
                                + ")");
            }
            checkPositive("maxKeys", maxKeys);
            // Else the largest requests could not be received in parts: the last growth of a
            // value's array holds the old array and the new one while it copies.
            if (partialRequestBudget() < 2 * maxRequestBytes + PARTIAL_REQUEST_SLACK) {
                throw new IllegalArgumentException(
                        "maxPartialRequestBytes: "
                                + partialRequestBudget()
                                + " (expected: at least twice maxRequestBytes plus 1 MiB, "
                                + (2 * maxRequestBytes + PARTIAL_REQUEST_SLACK)
                                + ")");
            }
            if (queuedReplyBudget() < maxRequestBytes) { // else the largest could never be sent
                throw new IllegalArgumentException(
                        "maxQueuedReplyBytes: "
                                + queuedReplyBudget()
                                + " (expected: at least maxRequestBytes, "
                                + maxRequestBytes
                                + ")");
            }
            if (readTimeout == null || readTimeout.isZero() || readTimeout.isNegative()) {
                throw new IllegalArgumentException(
                        "readTimeout: " + readTimeout + " (expected: a positive duration)");
            }
        }

        /**
         * Takes the environment's TLS settings unless {@link #optTls} was called, and checks that
         * they hold a certificate.
         *
         * @throws IllegalArgumentException if the settings cannot serve
         */
        void resolveTls() {
            if (!tlsSet) {
                tls = StoreTls.fromEnvironment();
                tlsSet = true;
            }
            if (tls != null) {
                tls.checkServer();
            }
        }

        private static void checkPositive(String name, long value) {
            if (value < 1) {
                throw new IllegalArgumentException(name + ": " + value + " (expected: at least 1)");
            }
        }
    }
}
