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
package ai.djl.distributed.backend.cpu.transport;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The 32-byte little-endian header that precedes every message between two ranks:
 *
 * <pre>
 * kind:u8 opcode:u8 dtype:u8 reduceOp:u8 root:i32 slot:i64 count:i64 length:i64 | length bytes
 * </pre>
 *
 * <p>{@code kind} is {@link #DATA} (a message for a slot), {@link #ABORT} (the peer failed; the
 * body is its reason in UTF-8) or {@link #BYE} (the peer closed its group in order).
 */
final class Frame {

    static final int HEADER_BYTES = 32;
    static final int DATA = 1;
    static final int ABORT = 2;
    static final int BYE = 3;

    /** Longest reason an ABORT frame may carry; a longer length is a malformed frame. */
    static final int MAX_REASON_BYTES = 64 * 1024;

    final int kind;
    final long slot;
    final OpSignature signature;
    final long length;

    private Frame(int kind, long slot, OpSignature signature, long length) {
        this.kind = kind;
        this.slot = slot;
        this.signature = signature;
        this.length = length;
    }

    static ByteBuffer encode(int kind, long slot, OpSignature sig, long length) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);
        b.put((byte) kind).put((byte) sig.opcode()).put((byte) sig.dtype());
        b.put((byte) sig.reduceOp()).putInt(sig.root());
        b.putLong(slot).putLong(sig.count()).putLong(length);
        return b.flip();
    }

    /**
     * Decodes a complete header.
     *
     * @param b the 32 header bytes, position at their start
     * @param peer the sender, for error messages
     * @return the frame
     * @throws IllegalStateException if the header is malformed
     */
    static Frame decode(ByteBuffer b, int peer) {
        int kind = b.get() & 0xFF;
        int opcode = b.get() & 0xFF;
        int dtype = b.get() & 0xFF;
        int op = b.get() & 0xFF;
        int root = b.getInt();
        long slot = b.getLong();
        long count = b.getLong();
        long length = b.getLong();
        if (kind < DATA || kind > BYE) {
            throw new IllegalStateException(
                    "malformed frame from rank " + peer + ": kind " + kind + " (expected: 1..3)");
        }
        if (length < 0
                || length > Integer.MAX_VALUE
                || (kind != DATA && length > MAX_REASON_BYTES)) {
            throw new IllegalStateException(
                    "malformed frame from rank " + peer + ": length " + length);
        }
        return new Frame(kind, slot, new OpSignature(opcode, dtype, op, root, count), length);
    }

    static boolean isCollective(long slot) {
        return slot >= 0;
    }

    static long seqOf(long slot) {
        return slot >>> Transport.INDEX_BITS;
    }
}
