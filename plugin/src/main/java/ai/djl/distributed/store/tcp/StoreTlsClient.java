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

import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslHandshakeTimeoutException;
import io.netty.util.concurrent.Future;

import java.nio.channels.ClosedChannelException;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The client's side of {@link StoreTls} on one connection: the {@link SslHandler} first in the
 * pipeline, the wait for its handshake, and what a failure means, for {@link StoreConnection}.
 *
 * <p>A failed handshake is final when the certificates decided it (untrusted, refused): no retry
 * can change them. It is worth a retry, a few times, when the server only closed the connection (it
 * was overloaded past its read timeout, or restarting) or the handshake timed out; a server without
 * TLS closes at once too, so those retries end quickly. After a successful handshake, TLS 1.3 lets
 * the server refuse the client's certificate only once the client's side is done: the refusal
 * arrives as an alert in place of the first reply, or, when the client's first queries meet the
 * closed socket, as a reset that discards the alert. Either is final.
 *
 * <p>One instance per connection attempt; the recorder runs on the channel's event loop, the waits
 * on the connecting thread.
 */
final class StoreTlsClient extends ChannelInboundHandlerAdapter {

    /** How many times a handshake the server only closed is tried before the failure is final. */
    static final int HANDSHAKE_ATTEMPTS = 3;

    private final SslHandler ssl;
    private final String peer;
    private volatile Throwable alert; // the first TLS failure seen after the handshake

    /**
     * Adds the TLS handler and this recorder to a new connection's pipeline.
     *
     * @param tls the settings, with trusted certificates
     * @param pipeline the pipeline, empty so far
     * @param host the server's host
     * @param port the server's port
     * @param timeout the connect timeout, which bounds the handshake too
     */
    StoreTlsClient(
            StoreTls tls, ChannelPipeline pipeline, String host, int port, Duration timeout) {
        this.ssl = tls.newClientHandler(pipeline.channel().alloc(), host, port, timeout);
        this.peer = host + ":" + port;
        pipeline.addLast(ssl, this);
    }

    /** {@inheritDoc} */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable failure) {
        if (alert == null) {
            alert = StoreTls.tlsCause(failure);
        }
        ctx.fireExceptionCaught(failure);
    }

    /**
     * Waits for the handshake.
     *
     * @param deadline the connect deadline, in {@link System#nanoTime()}
     * @throws StoreException if it failed: a {@link HandshakeCut} if the server only closed the
     *     connection, a plain one on a timeout, a final {@link StoreConnection.RefusedException}
     *     when the certificates decided it
     */
    void awaitHandshake(long deadline) {
        Future<?> done = ssl.handshakeFuture();
        try {
            long left = deadline - System.nanoTime();
            if (!done.await(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)))) {
                throw new StoreException("the TLS handshake with " + peer + " timed out");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException("interrupted during the TLS handshake with " + peer, e);
        }
        Throwable cause = done.cause();
        if (cause == null) {
            return;
        }
        if (cause instanceof SslHandshakeTimeoutException) {
            throw new StoreException("the TLS handshake with " + peer + " timed out", cause);
        }
        if (cause instanceof ClosedChannelException) {
            throw new HandshakeCut(
                    "the store server at "
                            + peer
                            + " closed the connection during the TLS handshake (does it use TLS?)",
                    cause);
        }
        throw new StoreConnection.RefusedException(
                "the TLS handshake with the store server at "
                        + peer
                        + " failed: "
                        + cause.getMessage()
                        + " (is the server's certificate signed by the authority of "
                        + StoreTls.CA_ENV
                        + "?)",
                cause);
    }

    /**
     * Returns what a failure after a successful handshake means.
     *
     * @param e the failure
     * @param connectionFailed whether the connection itself failed (closed or reset), as opposed to
     *     a reply that did not come in time
     * @return the exception to throw: final if the server refused this client's TLS
     */
    StoreException afterHandshake(StoreException e, boolean connectionFailed) {
        String fix =
                " (a server that requires client certificates needs "
                        + StoreTls.CERT_ENV
                        + " and "
                        + StoreTls.KEY_ENV
                        + ", signed by its authority)";
        if (alert != null) {
            return new StoreConnection.RefusedException(
                    "the store server at "
                            + peer
                            + " refused this client's TLS: "
                            + alert.getMessage()
                            + fix,
                    e);
        }
        if (!connectionFailed || e.getCause() instanceof StoreAuthClientHandler.Refused) {
            return e; // a timeout, or the store secret's verdict
        }
        return new StoreConnection.RefusedException(
                "the store server at "
                        + peer
                        + " closed the connection right after the TLS handshake: "
                        + e.getMessage()
                        + fix,
                e);
    }

    /** The server closed the connection during the handshake: retried a few times. */
    static final class HandshakeCut extends StoreException {

        private static final long serialVersionUID = 1L;

        HandshakeCut(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
