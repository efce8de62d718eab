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
 * {@link BFloat16} against {@link HalfReference}: every bfloat16 widened, the floats around every
 * rounding point narrowed, and (with {@code -Dreduce.exhaustive=true}) every float narrowed.
 */
class BFloat16Test {

    @Test
    void widensEveryBfloatExactly() {
        for (int h = 0; h < 1 << 16; h++) {
            float f = BFloat16.toFloat((short) h);
            double expected = HalfReference.bfloatValue(h);
            if (Double.isNaN(expected)) {
                assertEquals(h << 16, Float.floatToRawIntBits(f), hex(h));
            } else {
                assertEquals(expected, f, 0, hex(h));
                assertEquals(Math.copySign(1.0, expected), Math.copySign(1.0, f), hex(h));
            }
        }
    }

    @Test
    void roundsAroundEveryRoundingPoint() {
        // Every sign, exponent and kept mantissa, with the 16 dropped bits just below, at and just
        // above a tie, and at their extremes; plus random floats.
        int[] lows = {0, 1, 0x7FFF, 0x8000, 0x8001, 0xFFFF};
        for (int high = 0; high < 1 << 16; high++) {
            for (int low : lows) {
                check(Float.intBitsToFloat(high << 16 | low));
            }
        }
        Random random = new Random(16);
        for (int i = 0; i < 1_000_000; i++) {
            check(Float.intBitsToFloat(random.nextInt()));
        }
        check(Float.MAX_VALUE);
        check(-Float.MAX_VALUE);
        check(Float.MIN_VALUE);
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
        int expected = HalfReference.toBfloat(f);
        int actual = BFloat16.fromFloat(f) & 0xFFFF;
        if (expected != actual) {
            assertEquals(
                    hex(expected),
                    hex(actual),
                    String.format("fromFloat(%s 0x%08X)", f, Float.floatToRawIntBits(f)));
        }
    }

    private static String hex(int h) {
        return String.format("0x%04X", h);
    }
}
