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

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;

/**
 * The server's side of {@link StoreAuth}'s handshake, first in the pipeline of every connection of
 * a server with a secret: VALIDATE, AUTH, the client's proof. Until the client has proven the
 * secret nothing reaches the request decoder, so a client without it never reads or writes a key.
 * On success the handler hands any bytes that followed to the decoder and leaves the pipeline; on
 * failure it logs why (at WARN, naming the client), tells the client where the protocol allows, and
 * closes the connection. A handshake not finished within the read timeout also closes it.
 */
final class StoreAuthServerHandler extends ConnectionGate {

    private static final Logger logger = LoggerFactory.getLogger(StoreAuthServerHandler.class);

    private enum Step {
        VALIDATE,
        HELLO,
        PROOF,
        DONE
    }

    private final byte[] secret;
    private Step step = Step.VALIDATE;
    private byte[] clientNonce;
    private byte[] serverNonce;

    /**
     * Creates the handler of one connection.
     *
     * @param secret the store secret
     * @param timeout how long the client has to authenticate
     * @param afterTls whether TLS comes first (the time then runs from its handshake's end)
     */
    StoreAuthServerHandler(byte[] secret, Duration timeout, boolean afterTls) {
        super(logger, timeout, afterTls);
        this.secret = secret;
    }

    /** {@inheritDoc} */
    @Override
    String timeoutReason() {
        return "no authentication within " + timeout().toMillis() + " ms";
    }

    /** {@inheritDoc} */
    @Override
    void admit(ChannelHandlerContext ctx, ByteBuf in) {
        switch (step) {
            case VALIDATE:
                if (readValidate(ctx, in, "first query is not VALIDATE with the protocol magic")) {
                    step = Step.HELLO;
                    hello(ctx, in); // the hello may be in the same read
                }
                return;
            case HELLO:
                hello(ctx, in);
                return;
            case PROOF:
                proof(ctx, in);
                return;
            default:
                in.skipBytes(in.readableBytes());
        }
    }

    private void hello(ChannelHandlerContext ctx, ByteBuf in) {
        if (!in.isReadable()) {
            return;
        }
        int type = in.getUnsignedByte(in.readerIndex());
        if (type == StoreOpcode.PING.code()) {
            if (in.readableBytes() < 5) {
                return;
            }
            in.skipBytes(5);
            // PyTorch's client, or ours without the secret: its PING check fails with this value
            refuse(
                    ctx,
                    "it did not authenticate (a PyTorch client, or one without "
                            + StoreAuth.ENV
                            + "), and this server requires the store secret",
                    ctx.alloc().ioBuffer(4).writeIntLE((int) StoreAuth.AUTH_REQUIRED));
            return;
        }
        if (type != StoreAuth.AUTH) {
            refuse(
                    ctx,
                    "it sent query type " + type + " before authenticating; a secret is required",
                    null);
            return;
        }
        if (in.readableBytes() < 2 + StoreAuth.NONCE_BYTES) {
            return;
        }
        in.skipBytes(1);
        int version = in.readUnsignedByte();
        if (version != StoreAuth.VERSION) {
            refuse(
                    ctx,
                    "authentication version " + version + ", expected " + StoreAuth.VERSION,
                    null);
            return;
        }
        clientNonce = new byte[StoreAuth.NONCE_BYTES];
        in.readBytes(clientNonce);
        serverNonce = StoreAuth.nonce();
        ctx.writeAndFlush(
                ctx.alloc()
                        .ioBuffer(1 + StoreAuth.NONCE_BYTES)
                        .writeByte(StoreAuth.AUTH)
                        .writeBytes(serverNonce));
        step = Step.PROOF;
        proof(ctx, in);
    }

    private void proof(ChannelHandlerContext ctx, ByteBuf in) {
        if (in.readableBytes() < StoreAuth.PROOF_BYTES) {
            return;
        }
        byte[] proof = new byte[StoreAuth.PROOF_BYTES];
        in.readBytes(proof);
        if (!StoreAuth.matches(StoreAuth.clientProof(secret, clientNonce, serverNonce), proof)) {
            refuse(
                    ctx,
                    "its proof of the store secret is wrong (a different secret, or a replayed"
                            + " handshake)",
                    ctx.alloc().ioBuffer(1).writeByte(StoreAuth.REFUSED));
            return;
        }
        step = Step.DONE;
        ctx.writeAndFlush(
                ctx.alloc()
                        .ioBuffer(1 + StoreAuth.PROOF_BYTES)
                        .writeByte(StoreAuth.ACCEPTED)
                        .writeBytes(StoreAuth.serverProof(secret, clientNonce, serverNonce)));
        StoreRequestDecoder decoder = ctx.pipeline().get(StoreRequestDecoder.class);
        if (decoder != null) {
            decoder.markValidated();
        }
        // the bytes after the proof (the first queries) go on to the decoder
        ctx.pipeline().remove(this);
    }
}
