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
package ai.djl.distributed.backend.cpu.reduce;

import ai.djl.distributed.ReduceOp;

import java.nio.ByteBuffer;
import java.nio.LongBuffer;

/**
 * Bitwise kernels, which see only bytes: BAND, BOR and BXOR for every integer type, and every
 * operation on booleans. They combine 8 bytes at a time as longs, then the tail byte by byte.
 *
 * <p>Booleans are one byte each: SUM and MAX are OR, PRODUCT and MIN are AND, as in PyTorch. Any
 * non-zero byte counts as true and every result byte is 0 or 1.
 */
final class BitwiseKernels {

    private static final int LONGS = Scratch.BLOCK_BYTES / Long.BYTES;
    private static final long LOW_SEVEN = 0x7F7F7F7F7F7F7F7FL;
    private static final long LOW_BIT = 0x0101010101010101L;

    private enum Kind {
        AND,
        OR,
        XOR,
        BOOL_AND,
        BOOL_OR,
        BOOL_XOR
    }

    private BitwiseKernels() {}

    /**
     * Reduces {@code length} bytes.
     *
     * @param op BAND, BOR or BXOR; for booleans also SUM, PRODUCT, MIN or MAX
     * @param bool whether the bytes are booleans
     * @param dst the destination, also the left operands
     * @param dstOffset the offset of the destination's first byte
     * @param src the right operands
     * @param srcOffset the offset of the first right operand
     * @param length the number of bytes
     */
    static void reduce(
            ReduceOp.Type op,
            boolean bool,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int length) {
        Kind kind = kind(op, bool);
        int words = length / Long.BYTES;
        LongBuffer d = Scratch.longs(dst, dstOffset, words);
        LongBuffer s = Scratch.longs(src, srcOffset, words);
        Scratch scratch = Scratch.get();
        long[] a = scratch.longsA;
        long[] b = scratch.longsB;
        for (int i = 0; i < words; i += LONGS) {
            int n = Math.min(LONGS, words - i);
            d.get(i, a, 0, n);
            s.get(i, b, 0, n);
            combine(kind, a, b, n);
            d.put(i, a, 0, n);
        }
        for (int i = words * Long.BYTES; i < length; i++) {
            long x = combine(kind, dst.get(dstOffset + i), src.get(srcOffset + i));
            dst.put(dstOffset + i, (byte) x);
        }
    }

    private static Kind kind(ReduceOp.Type op, boolean bool) {
        switch (op) {
            case BAND:
                return bool ? Kind.BOOL_AND : Kind.AND;
            case BOR:
                return bool ? Kind.BOOL_OR : Kind.OR;
            case BXOR:
                return bool ? Kind.BOOL_XOR : Kind.XOR;
            case SUM:
            case MAX:
                return Kind.BOOL_OR;
            case PRODUCT:
            case MIN:
                return Kind.BOOL_AND;
            default:
                throw new AssertionError(op);
        }
    }

    private static void combine(Kind kind, long[] a, long[] b, int n) {
        switch (kind) {
            case AND:
                for (int k = 0; k < n; k++) {
                    a[k] &= b[k];
                }
                break;
            case OR:
                for (int k = 0; k < n; k++) {
                    a[k] |= b[k];
                }
                break;
            case XOR:
                for (int k = 0; k < n; k++) {
                    a[k] ^= b[k];
                }
                break;
            case BOOL_AND:
                for (int k = 0; k < n; k++) {
                    a[k] = truth(a[k]) & truth(b[k]);
                }
                break;
            case BOOL_OR:
                for (int k = 0; k < n; k++) {
                    a[k] = truth(a[k] | b[k]);
                }
                break;
            case BOOL_XOR:
                for (int k = 0; k < n; k++) {
                    a[k] = truth(a[k]) ^ truth(b[k]);
                }
                break;
            default:
                throw new AssertionError(kind);
        }
    }

    private static long combine(Kind kind, long a, long b) {
        switch (kind) {
            case AND:
                return a & b;
            case OR:
                return a | b;
            case XOR:
                return a ^ b;
            case BOOL_AND:
                return truth(a) & truth(b);
            case BOOL_OR:
                return truth(a | b);
            case BOOL_XOR:
                return truth(a) ^ truth(b);
            default:
                throw new AssertionError(kind);
        }
    }

    // Each byte becomes 1 if it was non-zero, else 0: bit 7 of ((x & 0x7F) + 0x7F) | x is set
    // exactly when some bit of the byte is, and no byte's sum carries into the next.
    private static long truth(long x) {
        return ((((x & LOW_SEVEN) + LOW_SEVEN) | x) >>> 7) & LOW_BIT;
    }
}
