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
    void skipsTheWhitespaceOfCsIsspaceOnly() {
        // std::stoll skips what isspace() accepts in the C locale: space, \t, \n, \v, \f, \r
        assertEquals(5, Stores.parseCounter("s", "k", ascii(" \t\n\u000b\f\r5")));
        for (char c = 0x1C; c <= 0x1F; ++c) { // Java's whitespace, not C's: no number
            byte[] text = {(byte) c, '5'};
            StoreException e =
                    assertThrows(StoreException.class, () -> Stores.parseCounter("s", "k", text));
            assertTrue(e.getMessage().contains("is not a decimal integer"), e::getMessage);
        }
        for (byte b : new byte[] {0, 0x08, 0x0E, (byte) 0x85, (byte) 0xA0}) {
            byte[] text = {b, '5'};
            assertThrows(StoreException.class, () -> Stores.parseCounter("s", "k", text));
        }
        // after the digits anything goes, whitespace of either kind included
        assertEquals(5, Stores.parseCounter("s", "k", ascii("5\u001c")));
    }

    @Test
    void looksAtTheFirst64BytesOnly() {
        // a counter is at most 20 characters as any store writes it; room for blanks and zeros
        String spaces = " ".repeat(64 - 1);
        assertEquals(5, Stores.parseCounter("s", "k", ascii(spaces + "5")));
        assertEquals(-5, Stores.parseCounter("s", "k", ascii(" ".repeat(62) + "-5")));
        String zeros = "0".repeat(64 - 2);
        assertEquals(42, Stores.parseCounter("s", "k", ascii(zeros + "42")));
        // a number that ends within them is read, whatever follows, however long
        byte[] tail = new byte[1 << 20];
        tail[0] = '7';
        assertEquals(7, Stores.parseCounter("s", "k", tail));
        // one that does not is refused without reading on: the value is not scanned in full
        for (String text : new String[] {spaces + " 5", zeros + "042", "  +" + zeros + "1"}) {
            StoreException e =
                    assertThrows(
                            StoreException.class,
                            () -> Stores.parseCounter("s", "k", ascii(text)),
                            text);
            assertTrue(e.getMessage().contains("first 64 bytes"), e::getMessage);
        }
        byte[] blank = new byte[16 << 20];
        java.util.Arrays.fill(blank, (byte) ' ');
        StoreException e =
                assertThrows(StoreException.class, () -> Stores.parseCounter("s", "k", blank));
        assertTrue(e.getMessage().contains("first 64 bytes"), e::getMessage);
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
