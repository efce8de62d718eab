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
import ai.djl.ndarray.types.DataType;

import java.nio.ByteBuffer;
import java.nio.ShortBuffer;

/**
 * Float16 and bfloat16 kernels: each block is widened to float32, combined by {@link
 * FloatKernels}'s loops and rounded back to nearest-even, as PyTorch computes these types. MIN and
 * MAX therefore return one of the operands unchanged (a NaN comes back canonical).
 */
final class HalfKernels {

    private static final int SHORTS = Scratch.BLOCK_BYTES / Short.BYTES;

    private HalfKernels() {}

    /**
     * Reduces float16 or bfloat16 elements.
     *
     * @param op SUM, PRODUCT, MIN or MAX
     * @param type FLOAT16 or BFLOAT16
     * @param dst the destination, also the left operands
     * @param dstOffset the byte offset of the destination's first element
     * @param src the right operands
     * @param srcOffset the byte offset of the first right operand
     * @param count the number of elements
     */
    static void reduce(
            ReduceOp.Type op,
            DataType type,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        boolean bfloat = type == DataType.BFLOAT16;
        ShortBuffer d = Scratch.shorts(dst, dstOffset, count);
        ShortBuffer s = Scratch.shorts(src, srcOffset, count);
        Scratch scratch = Scratch.get();
        short[] ha = scratch.shortsA;
        short[] hb = scratch.shortsB;
        float[] fa = scratch.floatsA;
        float[] fb = scratch.floatsB;
        for (int i = 0; i < count; i += SHORTS) {
            int n = Math.min(SHORTS, count - i);
            d.get(i, ha, 0, n);
            s.get(i, hb, 0, n);
            widen(bfloat, ha, fa, n);
            widen(bfloat, hb, fb, n);
            FloatKernels.combine(op, fa, fb, n);
            narrow(bfloat, fa, ha, n);
            d.put(i, ha, 0, n);
        }
    }

    /**
     * Multiplies float16 or bfloat16 elements by a factor, or divides them by it, in float32.
     *
     * @param type FLOAT16 or BFLOAT16
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param factor the multiplier or divisor, rounded to float32
     * @param divide whether to divide
     */
    static void scale(
            DataType type, ByteBuffer buf, int offset, int count, float factor, boolean divide) {
        boolean bfloat = type == DataType.BFLOAT16;
        ShortBuffer d = Scratch.shorts(buf, offset, count);
        Scratch scratch = Scratch.get();
        short[] h = scratch.shortsA;
        float[] f = scratch.floatsA;
        for (int i = 0; i < count; i += SHORTS) {
            int n = Math.min(SHORTS, count - i);
            d.get(i, h, 0, n);
            widen(bfloat, h, f, n);
            if (divide) {
                FloatKernels.divide(f, n, factor);
            } else {
                FloatKernels.scale(f, n, factor);
            }
            narrow(bfloat, f, h, n);
            d.put(i, h, 0, n);
        }
    }

    private static void widen(boolean bfloat, short[] src, float[] dst, int n) {
        if (bfloat) {
            BFloat16.toFloats(src, dst, n);
        } else {
            Float16.toFloats(src, dst, n);
        }
    }

    private static void narrow(boolean bfloat, float[] src, short[] dst, int n) {
        if (bfloat) {
            BFloat16.fromFloats(src, dst, n);
        } else {
            Float16.fromFloats(src, dst, n);
        }
    }
}
