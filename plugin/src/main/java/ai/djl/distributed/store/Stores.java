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

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Locale;

/** Argument checks and small helpers shared by the store implementations. */
public final class Stores {

    /**
     * The largest value a store keeps: one Java array, whose length some VMs cap a few bytes short
     * of {@link Integer#MAX_VALUE}.
     */
    public static final int MAX_VALUE_BYTES = Integer.MAX_VALUE - 64;

    /**
     * The most bytes of a stored counter that {@link #parseCounter} reads: its number must end
     * within them. Every store writes a counter in at most 20 (a sign and 19 digits); the rest is
     * room for the blanks and leading zeros {@code std::stoll} skips in one written by hand. So an
     * ADD on a value of any size reads at most this much of it under its store's lock.
     */
    public static final int MAX_COUNTER_TEXT = 64;

    private Stores() {}

    /**
     * Checks a key: a string that UTF-8 can encode, as keys travel and are stored as UTF-8 (a TCP
     * store's wire, a file store's records). Java's encoder would write an unpaired surrogate as
     * {@code ?}, so {@code "k\uD800"} and {@code "k?"} would name one key on the server and in the
     * file while the instance that wrote it kept them apart.
     *
     * @param key the key
     * @return the key
     * @throws IllegalArgumentException if it is null or holds an unpaired surrogate
     */
    public static String checkKey(String key) {
        return checkUtf8("key", key);
    }

    /**
     * Checks a string that becomes part of keys, as {@link #checkKey} checks a key.
     *
     * @param what what the string is, for the message ({@code "prefix"})
     * @param s the string
     * @return the string
     * @throws IllegalArgumentException if it is null or holds an unpaired surrogate
     */
    public static String checkUtf8(String what, String s) {
        if (s == null) {
            throw new IllegalArgumentException(what + ": null (expected: a string)");
        }
        for (int i = 0; i < s.length(); ++i) {
            char c = s.charAt(i);
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c)
                        && i + 1 < s.length()
                        && Character.isLowSurrogate(s.charAt(i + 1))) {
                    ++i; // a pair: one code point
                    continue;
                }
                throw new IllegalArgumentException(
                        what
                                + ": '"
                                + s
                                + "' holds an unpaired surrogate U+"
                                + Integer.toHexString(c).toUpperCase(Locale.ROOT)
                                + " at index "
                                + i
                                + " (expected: a string UTF-8 can encode)");
            }
        }
        return s;
    }

    /**
     * Checks a list of keys.
     *
     * @param keys the keys
     * @return the keys
     * @throws IllegalArgumentException if the list or a key is null, or a key holds an unpaired
     *     surrogate
     */
    public static List<String> checkKeys(List<String> keys) {
        if (keys == null) {
            throw new IllegalArgumentException("keys: null (expected: a list of keys)");
        }
        for (String key : keys) {
            checkKey(key);
        }
        return keys;
    }

    /**
     * Checks a value.
     *
     * @param name the parameter's name, for the message
     * @param value the value
     * @return the value
     * @throws IllegalArgumentException if it is null
     */
    public static byte[] checkValue(String name, byte[] value) {
        if (value == null) {
            throw new IllegalArgumentException(name + ": null (expected: a byte array)");
        }
        return value;
    }

    /**
     * Checks a timeout.
     *
     * @param timeout the timeout
     * @return the timeout
     * @throws IllegalArgumentException if it is null, zero or negative
     */
    public static Duration checkTimeout(Duration timeout) {
        if (timeout == null || timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException(
                    "timeout: " + timeout + " (expected: a positive duration)");
        }
        return timeout;
    }

    /**
     * Returns the deadline, in {@link System#nanoTime()} terms, of a timeout starting now;
     * saturates instead of overflowing for very long timeouts.
     *
     * @param timeout the timeout
     * @return the deadline
     */
    public static long deadline(Duration timeout) {
        long now = System.nanoTime();
        long nanos;
        try {
            nanos = timeout.toNanos();
        } catch (ArithmeticException e) {
            nanos = Long.MAX_VALUE / 2;
        }
        return now + Math.min(nanos, Long.MAX_VALUE / 2);
    }

    /**
     * Parses a counter's value as PyTorch's server does ({@code std::stoll}): optional leading
     * whitespace (what C's {@code isspace} accepts: space, tab, newline, vertical tab, form feed,
     * carriage return) and sign, then digits; anything after the digits is ignored. Only the first
     * {@link #MAX_COUNTER_TEXT} bytes are read: a number that does not end within them is refused.
     *
     * @param store the store, for the message
     * @param key the key, for the message
     * @param value the stored bytes
     * @return the number
     * @throws StoreException if the value does not start with a number, or its number does not end
     *     within {@link #MAX_COUNTER_TEXT} bytes
     */
    public static long parseCounter(String store, String key, byte[] value) {
        int end = Math.min(value.length, MAX_COUNTER_TEXT);
        int i = 0;
        while (i < end && isCSpace(value[i])) {
            ++i;
        }
        int start = i;
        if (i < end && (value[i] == '-' || value[i] == '+')) {
            ++i;
        }
        int digits = i;
        while (i < end && isDigit(value[i])) {
            ++i;
        }
        if (i == end && end < value.length && (i == digits || isDigit(value[i]))) {
            // blanks, zeros or digits up to the bound, and more after it
            throw new StoreException(
                    store
                            + ": add on key '"
                            + key
                            + "' whose value of "
                            + value.length
                            + " bytes has no number that ends within its first "
                            + MAX_COUNTER_TEXT
                            + " bytes");
        }
        if (i == digits) {
            String shown = new String(value, 0, Math.min(value.length, 32), StandardCharsets.UTF_8);
            throw new StoreException(
                    store
                            + ": add on key '"
                            + key
                            + "' whose value '"
                            + shown
                            + (value.length > 32 ? "..." : "")
                            + "' is not a decimal integer");
        }
        if (i - digits <= 18) { // cannot overflow: summed here, without a string
            long n = 0;
            for (int d = digits; d < i; ++d) {
                n = n * 10 + (value[d] - '0');
            }
            return value[start] == '-' ? -n : n;
        }
        String text = new String(value, start, i - start, StandardCharsets.US_ASCII);
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new StoreException(
                    store + ": counter '" + key + "' overflows a long: " + text, e);
        }
    }

    /**
     * Adds to a counter's value, refusing to wrap around as C++'s {@code int64_t} would.
     *
     * @param store the store, for the message
     * @param key the key, for the message
     * @param old the counter's value
     * @param delta what to add
     * @return the sum
     * @throws StoreException naming the store, key, value and delta if the sum is not a long; the
     *     caller then leaves the counter as it was
     */
    public static long addCounter(String store, String key, long old, long delta) {
        try {
            return Math.addExact(old, delta);
        } catch (ArithmeticException e) {
            // Wrapped, a counter of arrivals would jump to a huge negative count that every
            // later add carries on from; failing the add that overflows names the cause.
            throw new StoreException(
                    store
                            + ": add of "
                            + delta
                            + " to counter '"
                            + key
                            + "' holding "
                            + old
                            + " overflows a long; the counter is unchanged",
                    e);
        }
    }

    // C's isspace() in the "C" locale; Java's Character.isWhitespace also takes 0x1C to 0x1F
    private static boolean isCSpace(byte b) {
        return b == ' ' || (b >= '\t' && b <= '\r');
    }

    private static boolean isDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    /**
     * Returns the decimal ASCII bytes of a counter value.
     *
     * @param value the value
     * @return its bytes
     */
    public static byte[] formatCounter(long value) {
        if (value == Long.MIN_VALUE) { // no positive counterpart
            return Long.toString(value).getBytes(StandardCharsets.US_ASCII);
        }
        long rest = Math.abs(value);
        int length = value < 0 ? 2 : 1;
        for (long left = rest / 10; left != 0; left /= 10) {
            ++length;
        }
        byte[] out = new byte[length];
        for (int at = length - 1; at >= 0; --at) {
            out[at] = (byte) ('0' + rest % 10);
            rest /= 10;
        }
        if (value < 0) {
            out[0] = '-';
        }
        return out;
    }

    static byte[] concat(byte[] a, byte[] b) {
        long size = (long) a.length + b.length;
        if (size > MAX_VALUE_BYTES) {
            throw new StoreException(
                    "a value of "
                            + size
                            + " bytes is past the largest a store keeps, "
                            + MAX_VALUE_BYTES);
        }
        byte[] out = new byte[(int) size];
        System.arraycopy(a, 0, out, 0, a.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }

    /**
     * Checks that there is one non-null value per key.
     *
     * @param keys the keys
     * @param values the values
     * @throws IllegalArgumentException if either list or a value is null, or the sizes differ
     */
    public static void checkSameSize(List<String> keys, List<byte[]> values) {
        checkKeys(keys);
        if (values == null || keys.size() != values.size()) {
            throw new IllegalArgumentException(
                    "values: "
                            + (values == null ? null : values.size() + " values")
                            + " (expected: one per key, "
                            + keys.size()
                            + ")");
        }
        for (int i = 0; i < values.size(); ++i) {
            checkValue("values[" + i + "]", values.get(i));
        }
    }
}
