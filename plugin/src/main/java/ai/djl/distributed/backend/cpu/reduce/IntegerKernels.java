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
import java.nio.IntBuffer;
import java.nio.LongBuffer;

/**
 * INT8, UINT8, INT32 and INT64 kernels for SUM, PRODUCT, MIN and MAX. Sums and products wrap around
 * in two's complement, as PyTorch's do; UINT8 compares unsigned. (Bitwise operations are in {@link
 * BitwiseKernels}.)
 */
final class IntegerKernels {

    private static final int BYTES = Scratch.BLOCK_BYTES;
    private static final int INTS = Scratch.BLOCK_BYTES / Integer.BYTES;
    private static final int LONGS = Scratch.BLOCK_BYTES / Long.BYTES;

    private IntegerKernels() {}

    /**
     * Reduces INT8 or UINT8 elements.
     *
     * @param op SUM, PRODUCT, MIN or MAX
     * @param unsigned whether the elements are UINT8
     * @param dst the destination, also the left operands
     * @param dstOffset the byte offset of the destination's first element
     * @param src the right operands
     * @param srcOffset the byte offset of the first right operand
     * @param count the number of elements
     */
    static void reduceInt8(
            ReduceOp.Type op,
            boolean unsigned,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        Scratch scratch = Scratch.get();
        byte[] a = scratch.bytesA;
        byte[] b = scratch.bytesB;
        for (int i = 0; i < count; i += BYTES) {
            int n = Math.min(BYTES, count - i);
            dst.get(dstOffset + i, a, 0, n);
            src.get(srcOffset + i, b, 0, n);
            if (unsigned && (op == ReduceOp.Type.MIN || op == ReduceOp.Type.MAX)) {
                combineUnsigned(op, a, b, n);
            } else {
                combine(op, a, b, n);
            }
            dst.put(dstOffset + i, a, 0, n);
        }
    }

    /**
     * Reduces INT32 elements.
     *
     * @param op SUM, PRODUCT, MIN or MAX
     * @param dst the destination, also the left operands
     * @param dstOffset the byte offset of the destination's first element
     * @param src the right operands
     * @param srcOffset the byte offset of the first right operand
     * @param count the number of elements
     */
    static void reduceInt32(
            ReduceOp.Type op,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        IntBuffer d = Scratch.ints(dst, dstOffset, count);
        IntBuffer s = Scratch.ints(src, srcOffset, count);
        Scratch scratch = Scratch.get();
        int[] a = scratch.intsA;
        int[] b = scratch.intsB;
        for (int i = 0; i < count; i += INTS) {
            int n = Math.min(INTS, count - i);
            d.get(i, a, 0, n);
            s.get(i, b, 0, n);
            combine(op, a, b, n);
            d.put(i, a, 0, n);
        }
    }

    /**
     * Reduces INT64 elements.
     *
     * @param op SUM, PRODUCT, MIN or MAX
     * @param dst the destination, also the left operands
     * @param dstOffset the byte offset of the destination's first element
     * @param src the right operands
     * @param srcOffset the byte offset of the first right operand
     * @param count the number of elements
     */
    static void reduceInt64(
            ReduceOp.Type op,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        LongBuffer d = Scratch.longs(dst, dstOffset, count);
        LongBuffer s = Scratch.longs(src, srcOffset, count);
        Scratch scratch = Scratch.get();
        long[] a = scratch.longsA;
        long[] b = scratch.longsB;
        for (int i = 0; i < count; i += LONGS) {
            int n = Math.min(LONGS, count - i);
            d.get(i, a, 0, n);
            s.get(i, b, 0, n);
            combine(op, a, b, n);
            d.put(i, a, 0, n);
        }
    }

    private static void combine(ReduceOp.Type op, byte[] a, byte[] b, int n) {
        switch (op) {
            case SUM:
                for (int k = 0; k < n; k++) {
                    a[k] += b[k];
                }
                break;
            case PRODUCT:
                for (int k = 0; k < n; k++) {
                    a[k] *= b[k];
                }
                break;
            case MIN:
                for (int k = 0; k < n; k++) {
                    a[k] = (byte) Math.min(a[k], b[k]);
                }
                break;
            case MAX:
                for (int k = 0; k < n; k++) {
                    a[k] = (byte) Math.max(a[k], b[k]);
                }
                break;
            default:
                throw new AssertionError(op);
        }
    }

    private static void combineUnsigned(ReduceOp.Type op, byte[] a, byte[] b, int n) {
        if (op == ReduceOp.Type.MIN) {
            for (int k = 0; k < n; k++) {
                a[k] = (byte) Math.min(a[k] & 0xFF, b[k] & 0xFF);
            }
        } else {
            for (int k = 0; k < n; k++) {
                a[k] = (byte) Math.max(a[k] & 0xFF, b[k] & 0xFF);
            }
        }
    }

    private static void combine(ReduceOp.Type op, int[] a, int[] b, int n) {
        switch (op) {
            case SUM:
                for (int k = 0; k < n; k++) {
                    a[k] += b[k];
                }
                break;
            case PRODUCT:
                for (int k = 0; k < n; k++) {
                    a[k] *= b[k];
                }
                break;
            case MIN:
                for (int k = 0; k < n; k++) {
                    a[k] = Math.min(a[k], b[k]);
                }
                break;
            case MAX:
                for (int k = 0; k < n; k++) {
                    a[k] = Math.max(a[k], b[k]);
                }
                break;
            default:
                throw new AssertionError(op);
        }
    }

    private static void combine(ReduceOp.Type op, long[] a, long[] b, int n) {
        switch (op) {
            case SUM:
                for (int k = 0; k < n; k++) {
                    a[k] += b[k];
                }
                break;
            case PRODUCT:
                for (int k = 0; k < n; k++) {
                    a[k] *= b[k];
                }
                break;
            case MIN:
                for (int k = 0; k < n; k++) {
                    a[k] = Math.min(a[k], b[k]);
                }
                break;
            case MAX:
                for (int k = 0; k < n; k++) {
                    a[k] = Math.max(a[k], b[k]);
                }
                break;
            default:
                throw new AssertionError(op);
        }
    }
}
