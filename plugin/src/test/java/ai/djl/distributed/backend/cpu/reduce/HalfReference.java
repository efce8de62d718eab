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
 * Slow reference conversions for float16 and bfloat16, written from the formats' definitions in
 * double arithmetic ({@link Math#scalb}, {@link Math#rint}) rather than with bit tricks, to check
 * {@link Float16} and {@link BFloat16} against.
 */
final class HalfReference {

    /** Bits of the float16 canonical quiet NaN. */
    static final int HALF_NAN = 0x7E00;

    /** Bits of the bfloat16 canonical quiet NaN. */
    static final int BFLOAT_NAN = 0x7FC0;

    private HalfReference() {}

    /**
     * Returns the value of a float16: (-1)^s * m * 2^-24 if the exponent field is 0, else (-1)^s *
     * (1024 + m) * 2^(e - 25), infinity or NaN for e = 31.
     *
     * @param bits the float16's 16 bits
     * @return its value
     */
    static double halfValue(int bits) {
        return value(bits, 5, 10);
    }

    /**
     * Returns the value of a bfloat16: 8 exponent bits with bias 127, 7 mantissa bits.
     *
     * @param bits the bfloat16's 16 bits
     * @return its value
     */
    static double bfloatValue(int bits) {
        return value(bits, 8, 7);
    }

    /**
     * Rounds a value to the nearest float16, ties to even, overflowing to infinity; a NaN gives
     * {@link #HALF_NAN} with the NaN's sign.
     *
     * @param v the value, exactly a float
     * @return the float16's bits
     */
    static int toHalf(double v) {
        return round(v, 5, 10);
    }

    /**
     * Rounds a value to the nearest bfloat16, ties to even; a NaN gives {@link #BFLOAT_NAN}.
     *
     * @param v the value, exactly a float
     * @return the bfloat16's bits
     */
    static int toBfloat(double v) {
        return Double.isNaN(v) ? BFLOAT_NAN : round(v, 8, 7);
    }

    /**
     * Returns whether 16 bits are a NaN of the format.
     *
     * @param bits the bits
     * @param bfloat whether bfloat16, else float16
     * @return whether a NaN
     */
    static boolean isNaN(int bits, boolean bfloat) {
        return Double.isNaN(bfloat ? bfloatValue(bits) : halfValue(bits));
    }

    private static double value(int bits, int exponentBits, int mantissaBits) {
        int maxExponent = (1 << exponentBits) - 1;
        int bias = maxExponent / 2;
        double sign = (bits & 0x8000) != 0 ? -1 : 1;
        int e = (bits >>> mantissaBits) & maxExponent;
        int m = bits & ((1 << mantissaBits) - 1);
        if (e == maxExponent) {
            return m == 0 ? sign * Double.POSITIVE_INFINITY : Double.NaN;
        }
        if (e == 0) {
            return sign * Math.scalb((double) m, 1 - bias - mantissaBits);
        }
        return sign * Math.scalb((double) ((1 << mantissaBits) + m), e - bias - mantissaBits);
    }

    private static int round(double v, int exponentBits, int mantissaBits) {
        int maxExponent = (1 << exponentBits) - 1;
        int bias = maxExponent / 2;
        int sign = (Double.doubleToRawLongBits(v) < 0) ? 0x8000 : 0;
        int infinity = maxExponent << mantissaBits;
        if (Double.isNaN(v)) {
            return sign | infinity | 1 << (mantissaBits - 1);
        }
        double a = Math.abs(v);
        int minExponent = 1 - bias;
        // The exponent of the result's ulp: fixed below the normal range, else e - mantissaBits.
        int e = Math.max(Math.getExponent(a), minExponent);
        double m = Math.rint(Math.scalb(a, mantissaBits - e));
        if (m == 0) {
            return sign;
        }
        if (m >= 2 << mantissaBits) {
            m /= 2;
            e++;
        }
        if (m < 1 << mantissaBits) {
            return sign | (int) m; // subnormal
        }
        if (e + bias >= maxExponent || Double.isInfinite(a)) {
            return sign | infinity;
        }
        return sign | (e + bias) << mantissaBits | ((int) m - (1 << mantissaBits));
    }
}
