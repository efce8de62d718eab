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

import ai.djl.distributed.store.tcp.StoreOpcode.Field;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.MessageToByteEncoder;

import java.nio.charset.StandardCharsets;

/**
 * Encodes {@link StoreRequest}s as PyTorch's client does: the type byte, then each field of the
 * opcode's shape in little-endian order, the whole query in one buffer.
 */
public final class StoreRequestEncoder extends MessageToByteEncoder<StoreRequest> {

    /** Creates the encoder. */
    public StoreRequestEncoder() {
        super(StoreRequest.class);
    }

    /** {@inheritDoc} */
    @Override
    protected void encode(ChannelHandlerContext ctx, StoreRequest msg, ByteBuf out) {
        write(msg, out);
    }

    /** {@inheritDoc} */
    @Override
    protected ByteBuf allocateBuffer(
            ChannelHandlerContext ctx, StoreRequest msg, boolean preferDirect) {
        return ctx.alloc().ioBuffer(encodedSize(msg));
    }

    /**
     * Writes a request.
     *
     * @param msg the request
     * @param out where to write it
     */
    public static void write(StoreRequest msg, ByteBuf out) {
        out.writeByte(msg.opcode().code());
        Field[] shape = msg.opcode().shape();
        int key = 0;
        int value = 0;
        for (int i = 0; i < shape.length; ++i) {
            switch (shape[i]) {
                case U32:
                    out.writeIntLE((int) msg.number());
                    break;
                case I64:
                    out.writeLongLE(msg.number());
                    break;
                case COUNT:
                    int count = msg.keys().size();
                    out.writeLongLE(count);
                    // Emit the repeated group here, count times, then stop.
                    for (int r = 0; r < count; ++r) {
                        for (int j = i + 1; j < shape.length; ++j) {
                            if (shape[j] == Field.KEY) {
                                writeKey(msg.keys().get(key++), out);
                            } else {
                                writeValue(msg.values().get(value++), out);
                            }
                        }
                    }
                    return;
                case KEY:
                    writeKey(msg.keys().get(key++), out);
                    break;
                case VALUE:
                    writeValue(msg.values().get(value++), out);
                    break;
                default:
                    throw new AssertionError(shape[i]);
            }
        }
    }

    /**
     * Returns the number of bytes {@link #write} produces.
     *
     * @param msg the request
     * @return its encoded size
     */
    public static int encodedSize(StoreRequest msg) {
        long size = 1 + 8;
        for (String k : msg.keys()) {
            size += 8 + k.length();
        }
        for (byte[] v : msg.values()) {
            size += 8 + v.length;
        }
        return (int) Math.min(size, Integer.MAX_VALUE);
    }

    private static void writeKey(String key, ByteBuf out) {
        out.writeLongLE(key.length());
        out.writeCharSequence(key, StandardCharsets.ISO_8859_1);
    }

    private static void writeValue(byte[] value, ByteBuf out) {
        out.writeLongLE(value.length);
        out.writeBytes(value);
    }
}
