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
package ai.djl.distributed.store;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/** Counters as decimal ASCII, against the JDK's own parsing and printing of longs. */
class StoresCounterTest {

    private static List<Long> samples() {
        List<Long> values = new ArrayList<>();
        long power = 1;
        for (int digits = 0; digits < 19; ++digits) { // every length, and its edges
            long next = digits < 18 ? 10 * power : Long.MAX_VALUE; // 10^19 is past a long
            for (long v : new long[] {power, power - 1, power + 1, 9 * power, next - 1}) {
                values.add(v);
                values.add(-v);
            }
            power *= 10;
        }
        values.add(Long.MAX_VALUE);
        values.add(Long.MIN_VALUE);
        values.add(Long.MAX_VALUE - 1);
        values.add(Long.MIN_VALUE + 1);
        SplittableRandom random = new SplittableRandom(19);
        for (int i = 0; i < 2000; ++i) {
            values.add(random.nextLong() >> random.nextInt(64));
        }
        return values;
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }

    @Test
    void formatsAsLongToString() {
        for (long v : samples()) {
            assertArrayEquals(ascii(Long.toString(v)), Stores.formatCounter(v), "value " + v);
        }
    }

    @Test
    void parsesAsLongParseLong() {
        for (long v : samples()) {
            assertEquals(v, Stores.parseCounter("s", "k", ascii(Long.toString(v))), "value " + v);
        }
    }

    @Test
    void parsesPyTorchsLeniencies() {
        // leading blanks, a plus sign, leading zeros, anything after the digits: as std::stoll
        assertEquals(42, Stores.parseCounter("s", "k", ascii("  +0042")));
        assertEquals(-7, Stores.parseCounter("s", "k", ascii("\t-7xyz")));
        assertEquals(
                1234567890123456789L,
                Stores.parseCounter("s", "k", ascii("0001234567890123456789 ")));
        assertEquals(Long.MIN_VALUE, Stores.parseCounter("s", "k", ascii("-9223372036854775808")));
        // the most digits summed without a string, then one more, which takes Long.parseLong
        assertEquals(
                999_999_999_999_999_999L,
                Stores.parseCounter("s", "k", ascii(" +999999999999999999")));
        assertEquals(-1, Stores.parseCounter("s", "k", ascii("-0000000000000000001")));
        assertEquals(0, Stores.parseCounter("s", "k", ascii("-0")));
    }

    @Test
    void refusesWhatIsNoCounter() {
        StoreException notNumber =
                assertThrows(
                        StoreException.class, () -> Stores.parseCounter("s", "k", ascii("-x")));
        assertTrue(
                notNumber.getMessage().contains("is not a decimal integer"), notNumber::getMessage);
        StoreException overflow =
                assertThrows(
                        StoreException.class,
                        () -> Stores.parseCounter("s", "k", ascii("9223372036854775808")));
        assertTrue(overflow.getMessage().contains("overflows a long"), overflow::getMessage);
    }
}
