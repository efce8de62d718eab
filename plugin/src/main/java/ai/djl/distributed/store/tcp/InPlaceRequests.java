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
import io.netty.channel.ChannelInboundHandlerAdapter;

import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The server's fast path, first in a connection's pipeline after the handshake: serves the queries
 * of a job's steady state (SET, GET, ADD, and CHECK or WAIT on one key) that arrived whole in one
 * read straight from the read buffer, with no request object and no hop through the decoder.
 * Anything else (a request cut by the end of the read, another query, a length past the limits, the
 * handshake) goes on to the {@link StoreRequestDecoder} with the rest of the buffer, which decodes
 * it and raises its errors as before. While the decoder holds part of a request, or the handler
 * holds requests back for a client that does not read its replies, every byte goes to the decoder,
 * so the replies keep the order of the requests.
 *
 * <p>Runs on its connection's event loop only; not thread-safe.
 */
final class InPlaceRequests extends ChannelInboundHandlerAdapter {

    private static final int LENGTH = Long.BYTES;

    private final StoreRequestDecoder decoder;
    private final StoreServerHandler server;
    private final int maxKeyBytes;
    private final long maxRequestBytes;

    InPlaceRequests(
            StoreRequestDecoder decoder,
            StoreServerHandler server,
            int maxKeyBytes,
            long maxRequestBytes) {
        this.decoder = decoder;
        this.server = server;
        this.maxKeyBytes = maxKeyBytes;
        this.maxRequestBytes = maxRequestBytes;
    }

    /** {@inheritDoc} */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof ByteBuf) || !decoder.isIdle()) {
            ctx.fireChannelRead(msg);
            return;
        }
        ByteBuf in = (ByteBuf) msg;
        boolean rest = false;
        try {
            // each whole request at the head of the buffer, in order, while replies can go out
            while (in.isReadable() && server.isReady(ctx) && serveOne(ctx, in)) {
                continue;
            }
            rest = in.isReadable();
        } catch (StoreException e) {
            server.fail(ctx, e);
        } finally {
            if (!rest) {
                in.release();
            }
        }
        if (rest) {
            ctx.fireChannelRead(in);
        }
    }

    // Serves the request at the reader index if it is whole and of the fast kinds, and consumes it.
    private boolean serveOne(ChannelHandlerContext ctx, ByteBuf in) {
        int at = in.readerIndex();
        int end = in.writerIndex();
        StoreOpcode op = StoreOpcode.of(in.getUnsignedByte(at));
        if (op == null) {
            return false;
        }
        int keyAt = SingleKeyRequest.keyAt(in, op, at, end);
        if (keyAt < 0) {
            return false;
        }
        int next =
                SingleKeyRequest.keyEnd(
                        in, at, keyAt, end, maxKeyBytes, maxRequestBytes, Long.MAX_VALUE);
        if (next < 0) {
            return false;
        }
        int k = next - keyAt;
        switch (op) {
            case SET:
                int valueEnd =
                        SingleKeyRequest.valueEnd(
                                in, at, next, end, maxRequestBytes - k, Long.MAX_VALUE);
                if (valueEnd < 0) {
                    return false;
                }
                byte[] value = new byte[valueEnd - next - LENGTH];
                in.getBytes(next + LENGTH, value);
                in.readerIndex(valueEnd);
                server.set(key(in, keyAt, k), value);
                return true;
            case GET:
                in.readerIndex(next);
                server.get(ctx, key(in, keyAt, k));
                return true;
            case ADD:
                if (end - next < LENGTH) {
                    return false;
                }
                long delta = in.getLongLE(next);
                in.readerIndex(next + LENGTH);
                server.add(ctx, key(in, keyAt, k), delta);
                return true;
            case CHECK:
                in.readerIndex(next);
                server.check(ctx, List.of(key(in, keyAt, k)));
                return true;
            default: // WAIT
                in.readerIndex(next);
                server.await(ctx, List.of(key(in, keyAt, k)));
                return true;
        }
    }

    // Keys are raw bytes held in ISO-8859-1 strings, as the decoder makes them.
    private static String key(ByteBuf in, int at, int length) {
        return in.toString(at, length, StandardCharsets.ISO_8859_1);
    }
}
