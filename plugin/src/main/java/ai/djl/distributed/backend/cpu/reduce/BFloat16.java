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
 * bfloat16 ({@code torch.bfloat16}), the upper half of a float32, to and from float32 with
 * round-to-nearest-even.
 *
 * <p>Widening is exact. Narrowing gives {@code 0x7FC0} for every NaN, as {@code c10::BFloat16}
 * does, and overflows to infinity past the largest bfloat16.
 */
final class BFloat16 {

    private static final int CANONICAL_NAN = 0x7FC0;

    private BFloat16() {}

    /**
     * Widens a bfloat16 to a float, exactly.
     *
     * @param h the bfloat16's bits
     * @return the float
     */
    static float toFloat(short h) {
        return Float.intBitsToFloat(h << 16);
    }

    /**
     * Rounds a float to the nearest bfloat16, ties to even.
     *
     * @param f the float
     * @return the bfloat16's bits
     */
    static short fromFloat(float f) {
        int bits = Float.floatToRawIntBits(f);
        if ((bits & 0x7FFFFFFF) > 0x7F800000) {
            return CANONICAL_NAN;
        }
        // Add just under half an ulp of the result, plus one if the kept part is odd; a carry
        // bumps the exponent, up to infinity.
        return (short) ((bits + 0x7FFF + ((bits >>> 16) & 1)) >>> 16);
    }

    /**
     * Widens {@code n} bfloat16s.
     *
     * @param src the bfloat16s
     * @param dst the floats
     * @param n how many
     */
    static void toFloats(short[] src, float[] dst, int n) {
        for (int k = 0; k < n; k++) {
            dst[k] = toFloat(src[k]);
        }
    }

    /**
     * Rounds {@code n} floats to bfloat16s.
     *
     * @param src the floats
     * @param dst the bfloat16s
     * @param n how many
     */
    static void fromFloats(float[] src, short[] dst, int n) {
        for (int k = 0; k < n; k++) {
            dst[k] = fromFloat(src[k]);
        }
    }
}
