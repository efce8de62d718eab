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
import ai.djl.distributed.store.tcp.PendingCall.Reply;
import ai.djl.distributed.store.tcp.PendingCall.WaitResult;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.util.List;
import java.util.Queue;

/**
 * Matches the server's reply bytes to the client's queries, oldest first, and completes each
 * query's future. Replies carry no type, so the head of the pending queue says how to read the next
 * one. When the connection ends, every pending query fails.
 */
final class StoreResponseDecoder extends ByteToMessageDecoder {

    private final Queue<PendingCall> pending;
    private final String peer;
    private volatile Throwable failure;

    StoreResponseDecoder(Queue<PendingCall> pending, String peer) {
        this.pending = pending;
        this.peer = peer;
    }

    /**
     * Returns why the connection failed, once it has.
     *
     * @return the failure, or {@code null} while it is up
     */
    Throwable failure() {
        return failure;
    }

    /** {@inheritDoc} */
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        while (in.isReadable()) {
            PendingCall call = pending.peek();
            if (call == null) {
                throw new StoreCodecException(
                        in.readableBytes() + " unexpected bytes from the server");
            }
            Object result = read(call, in);
            if (result == null) {
                return; // wait for more bytes
            }
            pending.poll();
            if (call.reply == Reply.WAIT && result == WaitResult.CANCELED) {
                // WAIT_CANCELED answers both the WAIT and the CANCEL_WAIT queued behind it.
                PendingCall cancel = pending.poll();
                if (cancel != null) {
                    cancel.future.complete(result);
                }
            }
            call.future.complete(result);
        }
    }

    private static Object read(PendingCall call, ByteBuf in) {
        switch (call.reply) {
            case U8:
                return in.isReadable() ? (Object) (int) in.readUnsignedByte() : null;
            case WAIT:
            case CANCEL:
                if (!in.isReadable()) {
                    return null;
                }
                int code = in.readUnsignedByte();
                if (code == StoreProtocol.STOP_WAITING) {
                    return WaitResult.STOPPED;
                }
                if (code == StoreProtocol.WAIT_CANCELED) {
                    return WaitResult.CANCELED;
                }
                throw new StoreCodecException(
                        "reply "
                                + code
                                + " to "
                                + call.description()
                                + " (expected: 0, stop waiting, or 1, wait cancelled)");
            case I64:
                return in.readableBytes() >= Long.BYTES ? (Object) in.readLongLE() : null;
            case U32:
                return in.readableBytes() >= Integer.BYTES ? (Object) in.readUnsignedIntLE() : null;
            case BYTES:
                return readBytes(in);
            case MULTI_BYTES:
                while (call.values.size() < call.count) {
                    byte[] value = readBytes(in);
                    if (value == null) {
                        return null;
                    }
                    call.values.add(value);
                }
                return call.values;
            case QUEUE_POP:
                return readQueuePop(in);
            default:
                throw new AssertionError(call.reply);
        }
    }

    private static byte[] readBytes(ByteBuf in) {
        if (in.readableBytes() < Long.BYTES) {
            return null;
        }
        long length = in.getLongLE(in.readerIndex());
        if (length < 0 || length > Integer.MAX_VALUE - 16) {
            throw new StoreCodecException(
                    "reply value of " + Long.toUnsignedString(length) + " bytes");
        }
        if (in.readableBytes() < Long.BYTES + length) {
            return null;
        }
        in.skipBytes(Long.BYTES);
        byte[] value = new byte[(int) length];
        in.readBytes(value);
        return value;
    }

    // Empty queue: i64 0 alone. Otherwise the length before the pop, then the value.
    private static Object readQueuePop(ByteBuf in) {
        if (in.readableBytes() < Long.BYTES) {
            return null;
        }
        long length = in.getLongLE(in.readerIndex());
        if (length <= 0) {
            in.skipBytes(Long.BYTES);
            return new byte[0][];
        }
        int mark = in.readerIndex();
        in.skipBytes(Long.BYTES);
        byte[] value = readBytes(in);
        if (value == null) {
            in.readerIndex(mark);
            return null;
        }
        return new byte[][] {value};
    }

    /** {@inheritDoc} */
    @Override
    public void channelInactive(ChannelHandlerContext ctx) throws Exception {
        fail(new StoreException("connection to the TcpStore server at " + peer + " was closed"));
        super.channelInactive(ctx);
    }

    /** {@inheritDoc} */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(
                new StoreException(
                        "connection to the TcpStore server at "
                                + peer
                                + " failed: "
                                + cause.getMessage(),
                        cause));
        ctx.close();
    }

    private void fail(Throwable cause) {
        if (failure == null) {
            failure = cause;
        }
        PendingCall call;
        while ((call = pending.poll()) != null) {
            call.fail(failure);
        }
    }
}
