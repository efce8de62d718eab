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

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslHandshakeCompletionEvent;
import io.netty.util.concurrent.ScheduledFuture;

import org.slf4j.Logger;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A handler at the door of a server connection, before any query is served ({@link
 * StoreTlsServerHandler}, then {@link StoreAuthServerHandler}): the client must get through within
 * the read timeout, and a refusal is logged at WARN naming the client and the reason, tells the
 * client where the protocol allows, and closes the connection. A gate the client passes leaves the
 * pipeline, which stops its timer. A gate behind TLS starts its timer when the TLS handshake has
 * succeeded, so a server busy with handshakes does not spend the client's time at the next gate.
 *
 * <p>Runs on its connection's event loop only; not thread-safe.
 */
abstract class ConnectionGate extends ByteToMessageDecoder {

    private final Logger logger;
    private final Duration timeout;
    private final boolean afterTls;
    private boolean refused;
    private ScheduledFuture<?> timer;

    /**
     * Creates the gate of one connection.
     *
     * @param logger where refusals are logged (the subclass's)
     * @param timeout how long the client has to get through
     * @param afterTls whether a TLS handshake comes first, which then starts the timer
     */
    ConnectionGate(Logger logger, Duration timeout, boolean afterTls) {
        this.logger = logger;
        this.timeout = timeout;
        this.afterTls = afterTls;
    }

    /**
     * Returns how long the client has to get through.
     *
     * @return the read timeout
     */
    final Duration timeout() {
        return timeout;
    }

    /**
     * Returns why a client still at the gate when the timeout fires is refused.
     *
     * @return the reason, for the log
     */
    abstract String timeoutReason();

    /** {@inheritDoc} */
    @Override
    public void channelActive(ChannelHandlerContext ctx) throws Exception {
        super.channelActive(ctx);
        if (!afterTls) {
            startTimer(ctx);
        }
    }

    /** {@inheritDoc} */
    @Override
    public void userEventTriggered(ChannelHandlerContext ctx, Object event) throws Exception {
        if (afterTls
                && event instanceof SslHandshakeCompletionEvent
                && ((SslHandshakeCompletionEvent) event).isSuccess()) {
            startTimer(ctx);
        }
        super.userEventTriggered(ctx, event);
    }

    private void startTimer(ChannelHandlerContext ctx) {
        timer =
                ctx.executor()
                        .schedule(
                                () -> {
                                    if (!refused && ctx.channel().isActive()) {
                                        refuse(ctx, timeoutReason(), null);
                                    }
                                },
                                timeout.toNanos(),
                                TimeUnit.NANOSECONDS);
    }

    /** {@inheritDoc} */
    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (timer != null) {
            timer.cancel(false);
        }
    }

    /** {@inheritDoc} */
    @Override
    protected final void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (refused) {
            in.skipBytes(in.readableBytes()); // the connection is closing
            return;
        }
        admit(ctx, in);
    }

    /**
     * Reads what the client sent so far and lets it through (by leaving the pipeline), refuses it,
     * or waits for more bytes.
     *
     * @param ctx the connection
     * @param in the bytes received and not consumed yet
     */
    abstract void admit(ChannelHandlerContext ctx, ByteBuf in);

    /**
     * Reads PyTorch's VALIDATE (opcode and magic), with which every client's first query begins.
     *
     * @param ctx the connection
     * @param in the bytes received
     * @param otherwise why a client that sent something else is refused
     * @return {@code true} once a VALIDATE was read; {@code false} while its bytes are still
     *     coming, or after refusing the client
     */
    final boolean readValidate(ChannelHandlerContext ctx, ByteBuf in, String otherwise) {
        if (in.readableBytes() < 1 + Integer.BYTES) {
            return false;
        }
        int first = in.readUnsignedByte();
        long magic = in.readUnsignedIntLE();
        if (first != StoreOpcode.VALIDATE.code() || magic != StoreProtocol.MAGIC) {
            refuse(ctx, otherwise, null);
            return false;
        }
        return true;
    }

    /**
     * Refuses the client: logs why, sends {@code reply} if any, and closes the connection.
     *
     * @param ctx the connection
     * @param reason why, for the log
     * @param reply what tells the client, or {@code null} to just close
     */
    final void refuse(ChannelHandlerContext ctx, String reason, ByteBuf reply) {
        refused = true;
        logger.warn(
                "TcpStore server: refusing connection from {}: {}",
                ctx.channel().remoteAddress(),
                reason);
        if (reply == null) {
            ctx.close();
        } else {
            ctx.writeAndFlush(reply).addListener(ChannelFutureListener.CLOSE);
        }
    }
}
