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

import ai.djl.distributed.store.tcp.NettyTransport;
import ai.djl.distributed.store.tcp.StoreAuthClientHandler;
import ai.djl.distributed.store.tcp.StoreOpcode;
import ai.djl.distributed.store.tcp.StoreProtocol;
import ai.djl.distributed.store.tcp.StoreRequest;
import ai.djl.distributed.store.tcp.StoreRequestEncoder;
import ai.djl.distributed.store.tcp.StoreTls;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A rendezvous of N simultaneous clients on any TCPStore server (this project's or PyTorch's): each
 * connects, sends VALIDATE, adds 1 to one counter and waits on a key; the client that brings the
 * counter to N sets that key. The time runs from the first connect to the last release.
 *
 * <p>The clients are raw protocol state machines on two event-loop threads, so one process can hold
 * thousands of them; connects are started in a window so the kernel's accept backlog (capped by
 * {@code net.core.somaxconn}) never overflows into SYN retries.
 */
public final class StoreRendezvousBench {

    private final String host;
    private final int port;
    private final int window;
    private final String secret;
    private final StoreTls tls;

    /**
     * Creates the benchmark.
     *
     * @param host the server's host
     * @param port the server's port
     * @param window the most connects in flight at once
     * @param secret the store secret each client proves before its queries (the handshake is part
     *     of the time), or {@code null} for none
     * @param tls the TLS settings each client starts TLS with (the TLS handshake is part of the
     *     time), or {@code null} for none
     * @throws IllegalArgumentException if {@code window} is below 1
     */
    public StoreRendezvousBench(String host, int port, int window, String secret, StoreTls tls) {
        atLeastOne("window", window);
        this.host = host;
        this.port = port;
        this.window = window;
        this.secret = secret == null || secret.isEmpty() ? null : secret;
        this.tls = tls;
    }

    /**
     * Runs one rendezvous.
     *
     * @param clients the number of clients, at least 1
     * @param runId distinguishes this run's keys from earlier runs on the same server
     * @param timeoutSeconds how long to wait for all clients, at least 1
     * @return the seconds from the first connect to the last client released
     * @throws IllegalArgumentException if {@code clients} or {@code timeoutSeconds} is below 1
     * @throws IllegalStateException if a client failed (at once, with the first client's cause) or
     *     the rendezvous did not finish in time
     * @throws InterruptedException if interrupted while waiting for the clients
     */
    public double run(int clients, String runId, int timeoutSeconds) throws InterruptedException {
        atLeastOne("clients", clients);
        atLeastOne("timeoutSeconds", timeoutSeconds);
        String counter = "/bench/" + runId + "/counter";
        String go = "/bench/" + runId + "/go";
        // Netty's connect timeout is an int of milliseconds
        int connectTimeoutMillis = (int) Math.min(Integer.MAX_VALUE, timeoutSeconds * 1000L);
        EventLoopGroup group = NettyTransport.newGroup(2, "djl-bench-rdzv");
        CountDownLatch released = new CountDownLatch(clients);
        Semaphore connecting = new Semaphore(window);
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Failures failures = new Failures(failure, released, connecting);
        try {
            Bootstrap bootstrap =
                    new Bootstrap()
                            .group(group)
                            .channel(NettyTransport.clientChannel())
                            .option(ChannelOption.TCP_NODELAY, true)
                            .option(
                                    ChannelOption.SO_LINGER,
                                    0) // close with RST: no TIME_WAIT pile-up across runs
                            .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, connectTimeoutMillis)
                            .handler(
                                    new ChannelInitializer<Channel>() {
                                        @Override
                                        protected void initChannel(Channel ch) {
                                            if (tls != null) {
                                                // writes wait for the TLS handshake
                                                ch.pipeline()
                                                        .addLast(
                                                                tls.newClientHandler(
                                                                        ch.alloc(),
                                                                        host,
                                                                        port,
                                                                        Duration.ofSeconds(
                                                                                timeoutSeconds)));
                                            }
                                            if (secret != null) {
                                                // the client's channelActive follows the
                                                // handshake
                                                ch.pipeline()
                                                        .addLast(
                                                                new StoreAuthClientHandler(
                                                                        secret, host + ":" + port));
                                            }
                                            ch.pipeline()
                                                    .addLast(
                                                            new Client(
                                                                    clients,
                                                                    counter,
                                                                    go,
                                                                    released,
                                                                    connecting,
                                                                    failures));
                                        }
                                    });
            long start = System.nanoTime();
            for (int i = 0; i < clients && failure.get() == null; ++i) {
                // a failure hands out a permit, so this wait ends at once and the loop stops
                if (!connecting.tryAcquire(timeoutSeconds, TimeUnit.SECONDS)) {
                    throw new IllegalStateException(
                            "connects stalled after "
                                    + i
                                    + " clients: "
                                    + window
                                    + " in flight for "
                                    + timeoutSeconds
                                    + " s");
                }
                if (failure.get() != null) {
                    break;
                }
                bootstrap
                        .connect(host, port)
                        .addListener(
                                f -> {
                                    if (!f.isSuccess()) {
                                        failures.fail(f.cause());
                                        connecting.release();
                                    }
                                });
            }
            // a failure releases this wait too
            boolean done = released.await(timeoutSeconds, TimeUnit.SECONDS);
            double seconds = (System.nanoTime() - start) / 1e9;
            if (failure.get() != null) {
                throw new IllegalStateException("a client failed: " + failure.get(), failure.get());
            }
            if (!done) {
                throw new IllegalStateException(
                        (clients - released.getCount())
                                + "/"
                                + clients
                                + " clients released after "
                                + timeoutSeconds
                                + " s");
            }
            return seconds;
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS)
                    .awaitUninterruptibly(10, TimeUnit.SECONDS);
        }
    }

    private static void atLeastOne(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: at least 1)");
        }
    }

    /**
     * Records the first failure of a round and ends its waits at once: the connect loop's (a
     * permit) and the wait for the releases (the latch, counted down to 0); the caller checks the
     * failure before either outcome.
     */
    private record Failures(
            AtomicReference<Throwable> first, CountDownLatch released, Semaphore connecting) {

        void fail(Throwable cause) {
            if (first.compareAndSet(null, cause)) {
                connecting.release();
                while (released.getCount() > 0) {
                    released.countDown();
                }
            }
        }
    }

    /** One client: VALIDATE + ADD, then WAIT (after SET for the last to arrive), then done. */
    private static final class Client extends ChannelInboundHandlerAdapter {

        private final int clients;
        private final String counter;
        private final String go;
        private final CountDownLatch released;
        private final Semaphore connecting;
        private final Failures failures;
        private final ByteBuf received = Unpooled.buffer(16);
        private boolean added;
        private boolean permitHeld = true; // the window's permit, from connect to active
        private boolean done;

        Client(
                int clients,
                String counter,
                String go,
                CountDownLatch released,
                Semaphore connecting,
                Failures failures) {
            this.clients = clients;
            this.counter = counter;
            this.go = go;
            this.released = released;
            this.connecting = connecting;
            this.failures = failures;
        }

        /** Returns the window's permit once: when active, or when it fails before. */
        private void releasePermit() {
            if (permitHeld) {
                permitHeld = false;
                connecting.release();
            }
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            releasePermit();
            ByteBuf out = ctx.alloc().ioBuffer(64);
            StoreRequestEncoder.write(
                    new StoreRequest(
                            StoreOpcode.VALIDATE, List.of(), List.of(), StoreProtocol.MAGIC),
                    out);
            StoreRequestEncoder.write(
                    new StoreRequest(StoreOpcode.ADD, List.of(counter), List.of(), 1), out);
            ctx.writeAndFlush(out);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            try {
                // replies are 8 bytes (ADD) then 1 byte (WAIT), possibly split across reads
                received.writeBytes(in);
                if (!added && received.readableBytes() >= 8) {
                    added = true;
                    long arrived = received.readLongLE();
                    ByteBuf out = ctx.alloc().ioBuffer(64);
                    if (arrived == clients) {
                        StoreRequestEncoder.write(
                                new StoreRequest(
                                        StoreOpcode.SET,
                                        List.of(go),
                                        List.of("1".getBytes(StandardCharsets.US_ASCII))),
                                out);
                    }
                    StoreRequestEncoder.write(
                            new StoreRequest(StoreOpcode.WAIT, List.of(go), List.of()), out);
                    ctx.writeAndFlush(out);
                }
                if (added && received.isReadable()) {
                    done = true;
                    released.countDown();
                    ctx.close();
                }
            } finally {
                in.release();
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            done = true;
            releasePermit();
            failures.fail(cause);
            ctx.close();
        }

        /**
         * A connection closed before its client was released (a TLS handshake or the secret's
         * refused, the server gone) fails the round, with the handshake's reason when it has one.
         */
        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            releasePermit();
            received.release();
            if (!done) {
                done = true;
                failures.fail(closedCause(ctx));
            }
        }

        private static Throwable closedCause(ChannelHandlerContext ctx) {
            StoreAuthClientHandler auth = ctx.pipeline().get(StoreAuthClientHandler.class);
            if (auth != null && auth.result().isCompletedExceptionally()) {
                try {
                    auth.result().join();
                } catch (CompletionException e) {
                    return e.getCause();
                } catch (CancellationException e) {
                    return e;
                }
            }
            return new IllegalStateException(
                    "the connection closed before the rendezvous released this client");
        }
    }
}
