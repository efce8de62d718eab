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
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.ssl.SslHandler;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.channels.ClosedChannelException;
import java.time.Duration;

/**
 * First in the pipeline of every connection of a server with TLS: looks at the client's first five
 * bytes. A TLS record puts the server's {@link SslHandler} in this handler's place, and the bytes
 * go on to it. Anything else is a plaintext client (PyTorch's, or ours without TLS settings): it is
 * told where the protocol allows (its PING is answered with {@link StoreTls#TLS_REQUIRED}, its AUTH
 * with {@link StoreTls#TLS_REQUIRED_AUTH}), the refusal is logged at WARN naming it, and the
 * connection is closed, so it never reads or writes a key. A client that sends nothing within the
 * read timeout is closed too, and so is one whose TLS handshake does not end within the read
 * timeout after it began.
 *
 * <p>Runs on its connection's event loop only; not thread-safe.
 */
final class StoreTlsServerHandler extends ConnectionGate {

    private static final Logger logger = LoggerFactory.getLogger(StoreTlsServerHandler.class);

    private static final int HEADER = 5; // a TLS record header; PyTorch's VALIDATE and PING

    private final StoreTls tls;
    private boolean validated; // a plaintext VALIDATE came: the next query says what to answer

    StoreTlsServerHandler(StoreTls tls, Duration timeout) {
        super(logger, timeout, false);
        this.tls = tls;
    }

    /** {@inheritDoc} */
    @Override
    String timeoutReason() {
        return "it started no TLS handshake within " + timeout().toMillis() + " ms";
    }

    /** {@inheritDoc} */
    @Override
    void admit(ChannelHandlerContext ctx, ByteBuf in) {
        if (!validated) {
            if (in.readableBytes() < HEADER) {
                return;
            }
            if (SslHandler.isEncrypted(in, false)) {
                startTls(ctx);
                return;
            }
            if (!readValidate(ctx, in, "it sent neither a TLS handshake nor PyTorch's VALIDATE")) {
                return;
            }
            validated = true;
        }
        if (!in.isReadable()) {
            return;
        }
        int type = in.getUnsignedByte(in.readerIndex());
        if (type == StoreOpcode.PING.code()) {
            if (in.readableBytes() < HEADER) {
                return;
            }
            // PyTorch's client, or ours without TLS: its PING check fails with this value
            refuse(
                    ctx,
                    plaintext(),
                    ctx.alloc().ioBuffer(4).writeIntLE((int) StoreTls.TLS_REQUIRED));
        } else if (type == StoreAuth.AUTH) {
            // ours, with a store secret but without TLS: its handshake reads one byte and a nonce
            refuse(
                    ctx,
                    plaintext(),
                    ctx.alloc()
                            .ioBuffer(1 + StoreAuth.NONCE_BYTES)
                            .writeByte(StoreTls.TLS_REQUIRED_AUTH)
                            .writeZero(StoreAuth.NONCE_BYTES));
        } else {
            refuse(ctx, plaintext(), null);
        }
    }

    private static String plaintext() {
        return "it did not start TLS (a PyTorch client, or one without "
                + StoreTls.CA_ENV
                + "), and this server requires TLS";
    }

    private void startTls(ChannelHandlerContext ctx) {
        SslHandler ssl = tls.newServerHandler(ctx.alloc(), timeout());
        Object remote = ctx.channel().remoteAddress();
        ssl.handshakeFuture()
                .addListener(
                        f -> {
                            if (f.cause() instanceof ClosedChannelException) {
                                // the client left, or the server is closing: nothing to report
                                logger.debug("TLS handshake with {} cut: closed", remote);
                            } else if (!f.isSuccess()) {
                                logger.warn(
                                        "TcpStore server: refusing connection from {}: TLS"
                                                + " handshake failed: {}",
                                        remote,
                                        f.cause().getMessage());
                            }
                        });
        // the bytes read so far go on to the SslHandler, which takes this handler's place
        ctx.pipeline().replace(this, "tls", ssl);
    }
}
