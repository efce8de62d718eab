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
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;

/**
 * Float32 and float64 kernels, and the float32 loops that the 16-bit float kernels share.
 *
 * <p>MIN and MAX follow {@link Math#min(float, float)}: a NaN on either side gives NaN (as {@code
 * torch.minimum}), and -0.0 is smaller than +0.0.
 */
final class FloatKernels {

    private static final int FLOATS = Scratch.BLOCK_BYTES / Float.BYTES;
    private static final int DOUBLES = Scratch.BLOCK_BYTES / Double.BYTES;

    private FloatKernels() {}

    /**
     * Reduces float32 elements with SUM, PRODUCT, MIN or MAX.
     *
     * @param op the operation
     * @param dst the destination, also the left operands
     * @param dstOffset the byte offset of the destination's first element
     * @param src the right operands
     * @param srcOffset the byte offset of the first right operand
     * @param count the number of elements
     */
    static void reduceFloat32(
            ReduceOp.Type op,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        FloatBuffer d = Scratch.floats(dst, dstOffset, count);
        FloatBuffer s = Scratch.floats(src, srcOffset, count);
        Scratch scratch = Scratch.get();
        float[] a = scratch.floatsA;
        float[] b = scratch.floatsB;
        for (int i = 0; i < count; i += FLOATS) {
            int n = Math.min(FLOATS, count - i);
            d.get(i, a, 0, n);
            s.get(i, b, 0, n);
            combine(op, a, b, n);
            d.put(i, a, 0, n);
        }
    }

    /**
     * Reduces float64 elements with SUM, PRODUCT, MIN or MAX.
     *
     * @param op the operation
     * @param dst the destination, also the left operands
     * @param dstOffset the byte offset of the destination's first element
     * @param src the right operands
     * @param srcOffset the byte offset of the first right operand
     * @param count the number of elements
     */
    static void reduceFloat64(
            ReduceOp.Type op,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        DoubleBuffer d = Scratch.doubles(dst, dstOffset, count);
        DoubleBuffer s = Scratch.doubles(src, srcOffset, count);
        Scratch scratch = Scratch.get();
        double[] a = scratch.doublesA;
        double[] b = scratch.doublesB;
        for (int i = 0; i < count; i += DOUBLES) {
            int n = Math.min(DOUBLES, count - i);
            d.get(i, a, 0, n);
            s.get(i, b, 0, n);
            combine(op, a, b, n);
            d.put(i, a, 0, n);
        }
    }

    /**
     * Multiplies float32 elements by a factor.
     *
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param multiplier the multiplier
     */
    static void scaleFloat32(ByteBuffer buf, int offset, int count, float multiplier) {
        FloatBuffer d = Scratch.floats(buf, offset, count);
        float[] a = Scratch.get().floatsA;
        for (int i = 0; i < count; i += FLOATS) {
            int n = Math.min(FLOATS, count - i);
            d.get(i, a, 0, n);
            scale(a, n, multiplier);
            d.put(i, a, 0, n);
        }
    }

    /**
     * Divides float32 elements by a divisor.
     *
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param divisor the divisor
     */
    static void divideFloat32(ByteBuffer buf, int offset, int count, float divisor) {
        FloatBuffer d = Scratch.floats(buf, offset, count);
        float[] a = Scratch.get().floatsA;
        for (int i = 0; i < count; i += FLOATS) {
            int n = Math.min(FLOATS, count - i);
            d.get(i, a, 0, n);
            divide(a, n, divisor);
            d.put(i, a, 0, n);
        }
    }

    /**
     * Multiplies float64 elements by a factor.
     *
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param multiplier the multiplier
     */
    static void scaleFloat64(ByteBuffer buf, int offset, int count, double multiplier) {
        DoubleBuffer d = Scratch.doubles(buf, offset, count);
        double[] a = Scratch.get().doublesA;
        for (int i = 0; i < count; i += DOUBLES) {
            int n = Math.min(DOUBLES, count - i);
            d.get(i, a, 0, n);
            for (int k = 0; k < n; k++) {
                a[k] *= multiplier;
            }
            d.put(i, a, 0, n);
        }
    }

    /**
     * Divides float64 elements by a divisor.
     *
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param divisor the divisor
     */
    static void divideFloat64(ByteBuffer buf, int offset, int count, double divisor) {
        DoubleBuffer d = Scratch.doubles(buf, offset, count);
        double[] a = Scratch.get().doublesA;
        for (int i = 0; i < count; i += DOUBLES) {
            int n = Math.min(DOUBLES, count - i);
            d.get(i, a, 0, n);
            for (int k = 0; k < n; k++) {
                a[k] /= divisor;
            }
            d.put(i, a, 0, n);
        }
    }

    /**
     * Sets {@code a[k] = op(a[k], b[k])} for k in [0, n); op is SUM, PRODUCT, MIN or MAX.
     *
     * @param op the operation
     * @param a the left operands and the results
     * @param b the right operands
     * @param n the number of elements
     */
    static void combine(ReduceOp.Type op, float[] a, float[] b, int n) {
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

    /**
     * Sets {@code a[k] *= multiplier} for k in [0, n).
     *
     * @param a the elements
     * @param n the number of elements
     * @param multiplier the multiplier
     */
    static void scale(float[] a, int n, float multiplier) {
        for (int k = 0; k < n; k++) {
            a[k] *= multiplier;
        }
    }

    /**
     * Sets {@code a[k] /= divisor} for k in [0, n).
     *
     * @param a the elements
     * @param n the number of elements
     * @param divisor the divisor
     */
    static void divide(float[] a, int n, float divisor) {
        for (int k = 0; k < n; k++) {
            a[k] /= divisor;
        }
    }

    private static void combine(ReduceOp.Type op, double[] a, double[] b, int n) {
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
