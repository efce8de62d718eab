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

/**
 * IEEE 754 binary16 ({@code torch.float16}) to and from float32, with round-to-nearest-even,
 * subnormals, infinities and NaN (Java 17 has no {@code Float.float16ToFloat}).
 *
 * <p>Widening is exact and keeps a NaN's payload. Narrowing gives {@code 0x7E00} with the sign for
 * every NaN, and overflows to infinity from 65520 (halfway between the largest half, 65504, and
 * 2^16) up, as {@code c10::Half} does.
 */
final class Float16 {

    private static final int SIGN = 0x8000;
    // Float bits of 65520: from here on, a float rounds to the half infinity.
    private static final int OVERFLOW = 0x477FF000;
    // Float bits of 2^-14, the smallest normal half.
    private static final int MIN_NORMAL = 0x38800000;
    // (127 - 15) << 23: the difference of the exponent biases, in float bits.
    private static final int REBIAS = 0x38000000;
    // 0.5f: adding it to a float below 2^-14 rounds the sum to a multiple of 2^-24, the smallest
    // subnormal half, so the sum's low mantissa bits are the subnormal's.
    private static final float SUBNORMAL_MAGIC = 0.5f;
    private static final int SUBNORMAL_MAGIC_BITS = Float.floatToRawIntBits(SUBNORMAL_MAGIC);

    // Every half's float: widening by lookup is branch-free, four times faster than computing it.
    private static final float[] TO_FLOAT = new float[1 << 16];

    static {
        for (int h = 0; h < TO_FLOAT.length; h++) {
            TO_FLOAT[h] = toFloat((short) h);
        }
    }

    private Float16() {}

    /**
     * Widens a half to a float, exactly.
     *
     * @param h the half's bits
     * @return the float
     */
    static float toFloat(short h) {
        int sign = (h & SIGN) << 16;
        int exponent = (h >>> 10) & 0x1F;
        int mantissa = h & 0x3FF;
        if (exponent == 0x1F) {
            return Float.intBitsToFloat(sign | 0x7F800000 | mantissa << 13);
        }
        if (exponent == 0) {
            // Zero or subnormal: mantissa * 2^-24, exact in float.
            float magnitude = mantissa * 0x1p-24f;
            return sign == 0 ? magnitude : -magnitude;
        }
        return Float.intBitsToFloat(sign | (((h & 0x7FFF) << 13) + REBIAS));
    }

    /**
     * Rounds a float to the nearest half, ties to even.
     *
     * @param f the float
     * @return the half's bits
     */
    static short fromFloat(float f) {
        int bits = Float.floatToRawIntBits(f);
        int sign = (bits >>> 16) & SIGN;
        int abs = bits & 0x7FFFFFFF;
        if (abs >= OVERFLOW) {
            return (short) (sign | (abs > 0x7F800000 ? 0x7E00 : 0x7C00));
        }
        if (abs < MIN_NORMAL) {
            float sum = Float.intBitsToFloat(abs) + SUBNORMAL_MAGIC;
            return (short) (sign | (Float.floatToRawIntBits(sum) - SUBNORMAL_MAGIC_BITS));
        }
        // Round at bit 13: add just under half a half-ulp, plus one if the kept part is odd. A
        // carry out of the mantissa correctly bumps the exponent.
        int rounded = abs + 0xFFF + ((abs >>> 13) & 1);
        return (short) (sign | ((rounded - REBIAS) >>> 13));
    }

    /**
     * Widens {@code n} halves.
     *
     * @param src the halves
     * @param dst the floats
     * @param n how many
     */
    static void toFloats(short[] src, float[] dst, int n) {
        for (int k = 0; k < n; k++) {
            dst[k] = TO_FLOAT[src[k] & 0xFFFF];
        }
    }

    /**
     * Rounds {@code n} floats to halves.
     *
     * @param src the floats
     * @param dst the halves
     * @param n how many
     */
    static void fromFloats(float[] src, short[] dst, int n) {
        for (int k = 0; k < n; k++) {
            dst[k] = fromFloat(src[k]);
        }
    }
}
