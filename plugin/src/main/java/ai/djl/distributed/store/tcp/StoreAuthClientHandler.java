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

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The client's side of {@link StoreAuth}'s handshake, first in a client pipeline when a secret is
 * set: on connect it sends VALIDATE and AUTH, answers the server's nonce with its proof and checks
 * the server's proof. The handlers behind it see {@code channelActive} only once both sides have
 * proven the secret, and the handler then leaves the pipeline. Its {@link #result()} completes
 * then, or fails with a {@link StoreException} naming the cause. One instance serves one
 * connection, on its event loop.
 */
public final class StoreAuthClientHandler extends ByteToMessageDecoder {

    private final byte[] secret;
    private final String peer;
    private final byte[] clientNonce = StoreAuth.nonce();
    private final CompletableFuture<Void> result = new CompletableFuture<>();
    private byte[] serverNonce;

    /**
     * Creates the handler of one connection.
     *
     * @param secret the store secret; not empty
     * @param peer the server's address, for messages
     * @throws IllegalArgumentException if the secret is {@code null} or empty
     */
    public StoreAuthClientHandler(String secret, String peer) {
        this.secret = StoreAuth.of(secret);
        if (this.secret == null) {
            throw new IllegalArgumentException("secret: empty (expected: the store's secret)");
        }
        this.peer = peer;
    }

    /**
     * Returns the handshake's outcome.
     *
     * @return completes when both sides have proven the secret; fails with a {@link StoreException}
     *     otherwise
     */
    public CompletableFuture<Void> result() {
        return result;
    }

    /** {@inheritDoc} */
    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        // held back from the handlers behind until the handshake succeeds
        ctx.writeAndFlush(
                ctx.alloc()
                        .ioBuffer(7 + StoreAuth.NONCE_BYTES)
                        .writeByte(StoreOpcode.VALIDATE.code())
                        .writeIntLE(StoreProtocol.MAGIC)
                        .writeByte(StoreAuth.AUTH)
                        .writeByte(StoreAuth.VERSION)
                        .writeBytes(clientNonce));
    }

    /** {@inheritDoc} */
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (result.isDone()) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (serverNonce == null) {
            if (in.readableBytes() < 1 + StoreAuth.NONCE_BYTES) {
                return;
            }
            int type = in.readUnsignedByte();
            if (type == StoreTls.TLS_REQUIRED_AUTH) {
                refuse(ctx, StoreTls.requiredBy(peer));
                return;
            }
            if (type != StoreAuth.AUTH) {
                fail(ctx, "answered AUTH with byte " + type + ": not a DJL store server?");
                return;
            }
            serverNonce = new byte[StoreAuth.NONCE_BYTES];
            in.readBytes(serverNonce);
            ctx.writeAndFlush(
                    ctx.alloc()
                            .ioBuffer(StoreAuth.PROOF_BYTES)
                            .writeBytes(StoreAuth.clientProof(secret, clientNonce, serverNonce)));
        }
        if (in.readableBytes() < 1) {
            return;
        }
        if (in.getUnsignedByte(in.readerIndex()) == StoreAuth.REFUSED) {
            fail(ctx, "refused this client's proof: the store secrets differ");
            return;
        }
        if (in.readableBytes() < 1 + StoreAuth.PROOF_BYTES) {
            return;
        }
        int verdict = in.readUnsignedByte();
        byte[] proof = new byte[StoreAuth.PROOF_BYTES];
        in.readBytes(proof);
        if (verdict != StoreAuth.ACCEPTED
                || !StoreAuth.matches(
                        StoreAuth.serverProof(secret, clientNonce, serverNonce), proof)) {
            fail(ctx, "failed to prove the store secret: it holds another one");
            return;
        }
        result.complete(null);
        ctx.fireChannelActive();
        ctx.pipeline().remove(this);
    }

    /** {@inheritDoc} */
    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        if (!result.isDone()) {
            result.completeExceptionally(
                    new StoreException(
                            "the store server at "
                                    + peer
                                    + " closed the connection during the authentication"
                                    + " handshake: does it run without a secret (DJL_DIST_STORE"
                                    + "_SECRET), or is it PyTorch's?"));
        }
        super.channelInactive(ctx);
    }

    /** {@inheritDoc} */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (!result.isDone()) {
            result.completeExceptionally(
                    new StoreException(
                            "authentication with the store server at " + peer + " failed: " + cause,
                            cause));
            ctx.close();
            return;
        }
        ctx.fireExceptionCaught(cause);
    }

    private void fail(ChannelHandlerContext ctx, String why) {
        refuse(ctx, "the store server at " + peer + " " + why);
    }

    private void refuse(ChannelHandlerContext ctx, String message) {
        result.completeExceptionally(new Refused(message));
        ctx.close();
    }

    /** The server's verdict on this client (as opposed to a connection that just closed). */
    static final class Refused extends StoreException {

        private static final long serialVersionUID = 1L;

        Refused(String message) {
            super(message);
        }
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "StoreAuthClientHandler(" + peer + ")"; // never the secret
    }
}
