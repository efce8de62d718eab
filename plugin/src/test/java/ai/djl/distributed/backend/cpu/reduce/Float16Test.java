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

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import java.util.Random;
import java.util.stream.IntStream;

/**
 * {@link Float16} against {@link HalfReference}: every half widened, every tie and its neighbours
 * narrowed, and (with {@code -Dreduce.exhaustive=true}) every float narrowed.
 */
class Float16Test {

    @Test
    void widensEveryHalfExactly() {
        for (int h = 0; h < 1 << 16; h++) {
            float f = Float16.toFloat((short) h);
            double expected = HalfReference.halfValue(h);
            if (Double.isNaN(expected)) {
                // The payload moves up unchanged, the sign stays.
                int expectedBits = (h & 0x8000) << 16 | 0x7F800000 | (h & 0x3FF) << 13;
                assertEquals(expectedBits, Float.floatToRawIntBits(f), hex(h));
            } else {
                assertEquals(expected, f, 0, hex(h));
                assertEquals(Math.copySign(1.0, expected), Math.copySign(1.0, f), hex(h));
            }
        }
    }

    @Test
    void widensArraysLikeOneByOne() {
        short[] halves = new short[1 << 16];
        for (int h = 0; h < halves.length; h++) {
            halves[h] = (short) h;
        }
        float[] floats = new float[halves.length];
        Float16.toFloats(halves, floats, halves.length);
        for (int h = 0; h < halves.length; h++) {
            assertEquals(
                    Float.floatToRawIntBits(Float16.toFloat((short) h)),
                    Float.floatToRawIntBits(floats[h]),
                    hex(h));
        }
    }

    @Test
    void roundTripsEveryHalf() {
        for (int h = 0; h < 1 << 16; h++) {
            short back = Float16.fromFloat(Float16.toFloat((short) h));
            int expected = HalfReference.isNaN(h, false) ? (h & 0x8000) | 0x7E00 : h;
            assertEquals(expected, back & 0xFFFF, hex(h));
        }
    }

    @Test
    void roundsTiesAndTheirNeighbours() {
        // Every pair of adjacent non-negative halves, the last pair being 65504 and 2^16 (where
        // infinity starts): the midpoint, the floats either side of it and of both ends.
        for (int h = 0; h < 0x7C00; h++) {
            double low = HalfReference.halfValue(h);
            double high = h == 0x7BFF ? 65536 : HalfReference.halfValue(h + 1);
            float mid = (float) ((low + high) / 2);
            assertEquals((low + high) / 2, mid, 0, "midpoint exact in float");
            for (float f :
                    new float[] {
                        mid,
                        Math.nextUp(mid),
                        Math.nextDown(mid),
                        (float) low,
                        Math.nextUp((float) low),
                        Math.nextDown((float) low)
                    }) {
                check(f);
                check(-f);
            }
        }
    }

    @Test
    void roundsSpecialAndRandomFloats() {
        float[] special = {
            0f,
            Float.MIN_VALUE,
            Float.MIN_NORMAL,
            0x1p-25f,
            Math.nextUp(0x1p-25f),
            0x1p-24f,
            0x1.8p-24f,
            65504f,
            65519.996f,
            65520f,
            1e10f,
            Float.MAX_VALUE,
            Float.POSITIVE_INFINITY,
            Float.NaN,
            Float.intBitsToFloat(0x7F800001),
            Float.intBitsToFloat(0x7FFFFFFF)
        };
        for (float f : special) {
            check(f);
            check(-f);
        }
        Random random = new Random(16);
        for (int i = 0; i < 1_000_000; i++) {
            check(Float.intBitsToFloat(random.nextInt()));
        }
        // Each exponent and high mantissa, with the low 13 bits around the rounding point.
        int[] lows = {0, 1, 0xFFF, 0x1000, 0x1001, 0x1FFF};
        for (int high = 0; high < 1 << 19; high++) {
            for (int low : lows) {
                check(Float.intBitsToFloat(high << 13 | low));
            }
        }
    }

    @Test
    void roundsEveryFloat() {
        // Every float with -Dreduce.exhaustive=true (minutes); in the default build every 97th
        // low half, which still crosses every exponent, sign and rounding boundary's neighbourhood.
        int step = Boolean.getBoolean("reduce.exhaustive") ? 1 : 97;
        IntStream.range(0, 1 << 16)
                .parallel()
                .forEach(
                        high -> {
                            for (int low = high % step; low < 1 << 16; low += step) {
                                check(Float.intBitsToFloat(high << 16 | low));
                            }
                        });
    }

    private static void check(float f) {
        int expected = HalfReference.toHalf(f);
        int actual = Float16.fromFloat(f) & 0xFFFF;
        if (expected != actual) {
            assertEquals(hex(expected), hex(actual), "fromFloat(" + f + " " + floatHex(f) + ")");
        }
    }

    private static String hex(int h) {
        return String.format("0x%04X", h);
    }

    private static String floatHex(float f) {
        return String.format("0x%08X", Float.floatToRawIntBits(f));
    }
}
