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
package ai.djl.distributed.store.tcp;

import io.netty.buffer.ByteBuf;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * The keys an event loop's direct connections read lately, as strings: a request naming a key seen
 * recently gets the same {@link String} again instead of a new one. Clients repeat their keys (a
 * counter, a barrier, a rank's own keys), so most requests skip decoding the key, copying it twice
 * and hashing it (a string keeps its hash); and where the store's map holds that very instance (the
 * key was first stored through it), its lookup ends at the first identity check.
 *
 * <p>A direct-mapped table of {@value #SLOTS} keys of at most {@value #MAX_KEY_BYTES} bytes,
 * indexed by a hash of the key's bytes read a word at a time, each slot holding the key's words to
 * compare the next request's with. A longer key, or one evicted by another, is decoded as before.
 * Holds at most about 750 KiB.
 *
 * <p>One instance belongs to one event loop; it is not thread-safe.
 */
final class KeyCache {

    static final int SLOTS = 4096;
    static final int MAX_KEY_BYTES = 64;

    private final String[] keys = new String[SLOTS];
    private final long[][] words = new long[SLOTS][];
    private final long[] scratch = new long[MAX_KEY_BYTES / Long.BYTES];

    /**
     * Returns the key of {@code length} bytes at {@code index} of {@code in}, read as ISO-8859-1
     * like every key of the protocol; the buffer's indices are not changed.
     *
     * @param in the bytes read from a connection
     * @param index where the key starts
     * @param length its length in bytes, within the buffer's written bytes
     * @return the key, the same instance as last time if it was seen lately
     */
    String key(ByteBuf in, int index, int length) {
        if (length > MAX_KEY_BYTES) {
            return in.toString(index, length, StandardCharsets.ISO_8859_1);
        }
        long[] w = scratch;
        int whole = length >>> 3;
        long hash = length;
        for (int i = 0; i < whole; i++) {
            long word = in.getLongLE(index + (i << 3));
            w[i] = word;
            hash = mix(hash, word);
        }
        int n = whole;
        int tail = length & 7;
        if (tail != 0) {
            int at = index + (whole << 3);
            long word;
            if (at + Long.BYTES <= in.capacity()) { // a whole word, the bytes after the key masked
                word = in.getLongLE(at) & (-1L >>> (64 - (tail << 3)));
            } else {
                word = 0;
                for (int b = 0; b < tail; b++) {
                    word |= (long) in.getUnsignedByte(at + b) << (b << 3);
                }
            }
            w[n++] = word;
            hash = mix(hash, word);
        }
        // a multiply moves a word's differences only upwards: keys differing only in a word's
        // high bytes ("k/10/51", "k/10/52") would share a slot without folding them down first
        hash ^= hash >>> 29;
        hash *= 0xBF58476D1CE4E5B9L;
        int slot = (int) (hash ^ (hash >>> 32)) & (SLOTS - 1);
        String cached = keys[slot];
        long[] known = words[slot];
        if (cached != null && cached.length() == length) {
            int i = 0;
            while (i < n && known[i] == w[i]) {
                i++;
            }
            if (i == n) {
                return cached;
            }
        }
        String key = in.toString(index, length, StandardCharsets.ISO_8859_1);
        keys[slot] = key;
        if (known != null && known.length == n) {
            System.arraycopy(w, 0, known, 0, n); // the slot's array, reused
        } else {
            words[slot] = Arrays.copyOf(w, n);
        }
        return key;
    }

    private static long mix(long hash, long word) {
        return (hash ^ word) * 0x9E3779B97F4A7C15L;
    }
}
