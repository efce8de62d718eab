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
import ai.djl.distributed.store.tcp.PendingCall.Reply;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One client connection to a TCPStore server, on the event loops shared by the JVM's clients.
 * Queries go out in the order {@link #send} is called and replies are matched in that order; the
 * caller serialises queries that must not interleave. Not reusable after it fails.
 */
final class StoreConnection implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(StoreConnection.class);
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

    private final Channel channel;
    private final Queue<PendingCall> pending;
    private final StoreResponseDecoder decoder;
    private boolean closed;

    private StoreConnection(
            Channel channel, Queue<PendingCall> pending, StoreResponseDecoder decoder) {
        this.channel = channel;
        this.pending = pending;
        this.decoder = decoder;
    }

    /**
     * Connects, retrying refused or reset connections with jittered exponential backoff until the
     * timeout, then validates the protocol (VALIDATE, then a PING that must echo its nonce). With
     * TLS settings, TLS starts first; with a secret, the client and the server then prove it to
     * each other ({@link StoreAuth}). A certificate the TLS handshake refuses, a failed proof, or a
     * server that requires TLS or a secret this client lacks, fails at once, without retries; a TLS
     * handshake the server only closed is tried {@value StoreTlsClient#HANDSHAKE_ATTEMPTS} times
     * ({@link StoreTlsClient}).
     *
     * @param host the server's host
     * @param port the server's port
     * @param timeout how long to keep trying
     * @param secret the store secret, or {@code null} for none (PyTorch's protocol)
     * @param tls the TLS settings, or {@code null} for none (PyTorch's protocol)
     * @return the connection
     * @throws StoreException if no server answered correctly in time, or authentication failed
     */
    static StoreConnection connect(
            String host, int port, Duration timeout, String secret, StoreTls tls) {
        long deadline = Stores.deadline(timeout);
        long backoff = FIRST_BACKOFF.toNanos();
        Throwable last = null;
        boolean ping = true;
        int tlsCuts = 0;
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new StoreException(
                        "The client socket has timed out after "
                                + timeout.toMillis()
                                + " ms while trying to connect to ("
                                + host
                                + ", "
                                + port
                                + ")",
                        last);
            }
            try {
                return open(host, port, Duration.ofNanos(left), ping, secret, tls);
            } catch (RefusedException e) {
                throw e; // retrying cannot change the secrets or certificates
            } catch (StoreTlsClient.HandshakeCut e) {
                if (++tlsCuts >= StoreTlsClient.HANDSHAKE_ATTEMPTS) {
                    throw new RefusedException(
                            e.getMessage() + ", " + tlsCuts + " times", e.getCause());
                }
                last = e;
            } catch (PingRejectedException e) {
                // PyTorch 2.2 and 2.3 servers predate PING and drop the connection on it
                logger.info(
                        "{}:{} closed the connection on PING (PyTorch < 2.4?): VALIDATE only",
                        host,
                        port);
                ping = false;
                continue;
            } catch (StoreException e) {
                last = e.getCause() != null ? e.getCause() : e;
            }
            // jitter of +-50 %, as PyTorch's ExponentialBackoffWithJitter
            long sleep = (long) (backoff * (0.5 + ThreadLocalRandom.current().nextDouble()));
            sleep = Math.min(sleep, deadline - System.nanoTime());
            if (sleep > 0) {
                try {
                    TimeUnit.NANOSECONDS.sleep(sleep);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new StoreException(
                            "interrupted while connecting to " + host + ":" + port, e);
                }
            }
            backoff = Math.min((long) (backoff * 1.5), MAX_BACKOFF.toNanos());
        }
    }

    private static StoreConnection open(
            String host, int port, Duration timeout, boolean ping, String secret, StoreTls tls) {
        long deadline = Stores.deadline(timeout);
        String peer = host + ":" + port;
        Queue<PendingCall> pending = new ConcurrentLinkedQueue<>();
        StoreResponseDecoder decoder = new StoreResponseDecoder(pending, peer);
        EventLoopGroup group = NettyTransport.acquireClientGroup();
        Channel channel = null;
        StoreAuthClientHandler auth =
                secret == null || secret.isEmpty()
                        ? null
                        : new StoreAuthClientHandler(secret, peer);
        AtomicReference<StoreTlsClient> tlsClient = new AtomicReference<>();
        try {
            Bootstrap bootstrap =
                    new Bootstrap()
                            .group(group)
                            .channel(NettyTransport.clientChannel())
                            .option(ChannelOption.TCP_NODELAY, true)
                            .option(
                                    ChannelOption.CONNECT_TIMEOUT_MILLIS,
                                    (int)
                                            Math.min(
                                                    Integer.MAX_VALUE,
                                                    Math.max(1, timeout.toMillis())))
                            .handler(
                                    new ChannelInitializer<Channel>() {
                                        @Override
                                        protected void initChannel(Channel ch) {
                                            if (tls != null) {
                                                tlsClient.set(
                                                        new StoreTlsClient(
                                                                tls,
                                                                ch.pipeline(),
                                                                host,
                                                                port,
                                                                timeout));
                                            }
                                            if (auth != null) {
                                                ch.pipeline().addLast(auth);
                                            }
                                            ch.pipeline()
                                                    .addLast(new StoreRequestEncoder(), decoder);
                                        }
                                    });
            ChannelFuture future = bootstrap.connect(host, port);
            if (!future.awaitUninterruptibly(timeout.toMillis() + 1000) || !future.isSuccess()) {
                future.channel().close();
                throw new StoreException("cannot connect to " + peer, future.cause());
            }
            channel = future.channel();
            if (tls != null) {
                tlsClient.get().awaitHandshake(deadline);
            }
            try {
                if (auth != null) {
                    authenticate(auth, peer, deadline);
                }
                StoreConnection conn = new StoreConnection(channel, pending, decoder);
                conn.handshake(
                        Duration.ofNanos(Math.max(1, deadline - System.nanoTime())),
                        ping,
                        auth == null);
                return conn;
            } catch (StoreException e) {
                throw tls == null
                        ? e
                        : tlsClient.get().afterHandshake(e, decoder.failure() != null);
            }
        } catch (RuntimeException e) {
            if (channel != null) {
                channel.close().awaitUninterruptibly(1000);
            }
            NettyTransport.releaseClientGroup();
            throw e instanceof StoreException
                    ? e
                    : new StoreException("cannot connect to " + peer, e);
        }
    }

    private static void authenticate(StoreAuthClientHandler auth, String peer, long deadline) {
        try {
            auth.result().get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw new RefusedException(e.getCause().getMessage(), e.getCause());
        } catch (TimeoutException e) {
            throw new StoreException("authentication with " + peer + " timed out", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while authenticating with " + peer, e);
        }
    }

    // VALIDATE opens every connection of PyTorch 2.2+ (the authentication sent it already, if
    // any); the PING nonce proves a live, matching peer.
    private void handshake(Duration timeout, boolean ping, boolean validate) {
        if (validate) {
            call(
                    new StoreRequest(
                            StoreOpcode.VALIDATE, List.of(), List.of(), StoreProtocol.MAGIC),
                    ReplyType.NONE,
                    timeout);
        }
        if (!ping) {
            return;
        }
        long nonce = ProcessHandle.current().pid() & 0xFFFFFFFFL;
        Long echo;
        try {
            echo =
                    call(
                            new StoreRequest(StoreOpcode.PING, List.of(), List.of(), nonce),
                            ReplyType.U32,
                            timeout);
        } catch (StoreException e) {
            if (decoder.failure() != null) {
                throw new PingRejectedException(e);
            }
            throw e;
        }
        if (Long.valueOf(StoreTls.TLS_REQUIRED).equals(echo)) {
            throw new RefusedException(StoreTls.requiredBy(channel.remoteAddress()), null);
        }
        if (Long.valueOf(StoreAuth.AUTH_REQUIRED).equals(echo)) {
            throw new RefusedException(
                    "the store server at "
                            + channel.remoteAddress()
                            + " requires a store secret, and this client has none: set "
                            + StoreAuth.ENV
                            + " (or TcpStore.Builder.optSecret) to the server's secret",
                    null);
        }
        if (!Long.valueOf(nonce).equals(echo)) {
            throw new StoreException(
                    "Ping failed, invalid value returned from server. Expected: "
                            + nonce
                            + ", Got: "
                            + echo);
        }
    }

    /**
     * Sends a query without waiting for its reply.
     *
     * @param request the query
     * @param reply the shape of its reply
     * @param count for {@link Reply#MULTI_BYTES}, the number of values
     * @return the call, whose future completes with the reply (or when written, for {@link
     *     Reply#NONE} and for {@link Reply#MULTI_BYTES} of no values)
     */
    PendingCall send(StoreRequest request, Reply reply, int count) {
        PendingCall call = new PendingCall(reply, count, request);
        Throwable failure = decoder.failure();
        if (failure != null) {
            call.fail(failure);
            return call;
        }
        // A MULTI_GET of no keys has a reply of no bytes, as a query without one: nothing would
        // ever come to complete it if it waited for its reply in the queue.
        boolean replyless = reply == Reply.NONE || (reply == Reply.MULTI_BYTES && count == 0);
        if (!replyless) {
            pending.add(call);
        }
        channel.writeAndFlush(request)
                .addListener(
                        f -> {
                            if (!f.isSuccess()) {
                                Throwable cause =
                                        decoder.failure() != null ? decoder.failure() : f.cause();
                                call.future.completeExceptionally(
                                        new StoreException(
                                                "cannot send "
                                                        + call.description()
                                                        + " to "
                                                        + channel.remoteAddress()
                                                        + ": "
                                                        + cause.getMessage(),
                                                cause));
                                channel.close();
                            } else if (replyless) {
                                call.future.complete(reply == Reply.NONE ? null : call.values);
                            }
                        });
        return call;
    }

    /**
     * Sends a query and blocks for its reply.
     *
     * @param request the query
     * @param reply the reply type of its opcode
     * @param timeout how long to wait for the reply
     * @param <T> the type of the reply
     * @return the reply ({@code null} for {@link ReplyType#NONE})
     * @throws StoreException if the connection failed, or no reply came in time (the connection is
     *     then closed, since later replies could no longer be matched)
     */
    <T> T call(StoreRequest request, ReplyType<T> reply, Duration timeout) {
        Reply shape = reply.shape();
        int count = shape == Reply.MULTI_BYTES ? request.keys().size() : 0;
        return reply.of(await(send(request, shape, count), timeout));
    }

    /**
     * Blocks for a call's reply.
     *
     * @param call the call
     * @param timeout how long to wait
     * @return the reply
     * @throws StoreException as {@link #call} does
     */
    Object await(PendingCall call, Duration timeout) {
        Object result = awaitOrNull(call.future, timeout);
        if (result == TIMED_OUT) {
            channel.close();
            throw new StoreException(
                    "no reply to "
                            + call.description()
                            + " from "
                            + channel.remoteAddress()
                            + " within "
                            + timeout.toMillis()
                            + " ms; connection closed");
        }
        return result;
    }

    private static final Object TIMED_OUT = new Object();

    /**
     * Blocks for a future, returning a marker instead of throwing when the time runs out.
     *
     * @return the result, or {@link #TIMED_OUT}
     */
    static Object awaitOrNull(CompletableFuture<Object> future, Duration timeout) {
        try {
            return future.get(Math.max(1, nanos(timeout)), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            return TIMED_OUT;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof StoreException) {
                // rethrown on this thread, with its stack, naming the original as the cause
                throw new StoreException(cause.getMessage(), cause);
            }
            throw new StoreException("store call failed: " + cause, cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted while waiting for the store", e);
        }
    }

    /**
     * Returns a timeout in nanoseconds, saturated as {@link Stores#deadline} saturates it: a
     * duration past {@code Long.MAX_VALUE} nanoseconds (292 years) waits that long rather than
     * overflowing.
     *
     * @param timeout a positive duration
     * @return its nanoseconds, at most {@code Long.MAX_VALUE / 2}
     */
    static long nanos(Duration timeout) {
        try {
            return Math.min(timeout.toNanos(), Long.MAX_VALUE / 2);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 2;
        }
    }

    static boolean timedOut(Object result) {
        return result == TIMED_OUT;
    }

    /** Closes the connection; idempotent. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        channel.close().awaitUninterruptibly(5000);
        NettyTransport.releaseClientGroup();
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return String.valueOf(channel.remoteAddress());
    }

    /**
     * The server closed the connection in answer to PING: it predates PING (PyTorch before 2.4).
     */
    private static final class PingRejectedException extends StoreException {

        private static final long serialVersionUID = 1L;

        PingRejectedException(Throwable cause) {
            super("the server closed the connection on PING", cause);
        }
    }

    /** The server refused this client (its secret, its TLS): no retry can help. */
    static final class RefusedException extends StoreException {

        private static final long serialVersionUID = 1L;

        RefusedException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
