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

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The keys and queues of a store held in memory, with the semantics PyTorch's stores share:
 * counters kept as decimal ASCII, compare-and-set, append, and queues, a non-empty one of which
 * counts as a present key for check and wait. The table of {@link HashStore} and of the TCP store
 * server.
 *
 * <p>Not thread-safe: its owner calls it under a lock of its own, and decides whom a write wakes.
 * Values are kept as given and returned as kept, not copied: an owner whose callers may change a
 * value after the call copies it on the way in and out. The exception is a value appended to: it
 * grows in a buffer with room to spare, as PyTorch's servers grow a {@code std::vector}, so a run
 * of appends copies each byte a bounded number of times instead of the whole value on every append;
 * the next read joins it into an array of its exact length, which is then kept as any other value.
 * An array this table has returned is never written to again.
 */
public final class KeyTable {

    private final String store; // names the store in errors
    private final Map<String, byte[]> values = new HashMap<>();
    // Keys appended to since they were last read; a key is in values or here, never in both.
    private final Map<String, Growing> growing = new HashMap<>();
    private final Map<String, ArrayDeque<byte[]>> queues = new HashMap<>();

    /**
     * Creates an empty table.
     *
     * @param store names the owning store in errors (a counter that is not a number)
     */
    public KeyTable(String store) {
        this.store = store;
    }

    /**
     * Sets a key's value.
     *
     * @param key the key
     * @param value the value, kept as given
     */
    public void set(String key, byte[] value) {
        growing.remove(key);
        values.put(key, value);
    }

    /**
     * Returns a key's value.
     *
     * @param key the key
     * @return the value as kept, or {@code null} if the key has none
     */
    public byte[] get(String key) {
        byte[] value = values.get(key);
        if (value == null) {
            Growing g = growing.remove(key);
            if (g != null) {
                value = g.toArray();
                values.put(key, value);
            }
        }
        return value;
    }

    /**
     * Returns whether a key has a value (queues aside).
     *
     * @param key the key
     * @return whether {@link #get} would return a value
     */
    public boolean hasValue(String key) {
        return values.containsKey(key) || growing.containsKey(key);
    }

    /**
     * Adds to a counter kept as decimal ASCII; a missing key counts from 0.
     *
     * @param key the counter's key
     * @param delta what to add
     * @return the new value
     * @throws StoreException naming the store and key if the value is not a number, or the store,
     *     key, value and delta if the sum overflows a long; the value is then unchanged
     */
    public long add(String key, long delta) {
        byte[] old = get(key);
        long value =
                old == null
                        ? delta
                        : Stores.addCounter(
                                store, key, Stores.parseCounter(store, key, old), delta);
        values.put(key, Stores.formatCounter(value)); // get() left the key out of growing
        return value;
    }

    /**
     * Sets a key to {@code desired} if it holds {@code expected}, or if it is missing and {@code
     * expected} is empty, as PyTorch's {@code compare_set}.
     *
     * @param key the key
     * @param expected the value it must hold
     * @param desired the value to set, kept as given
     * @return {@code desired} itself if it was set (owners test this by identity to wake waiters);
     *     otherwise the current value, or {@code expected} if the key is missing
     */
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        byte[] current = get(key);
        if (current == null) {
            if (expected.length != 0) {
                return expected;
            }
        } else if (!Arrays.equals(current, expected)) {
            return current;
        }
        values.put(key, desired);
        return desired;
    }

    /**
     * Appends bytes to a key's value; a missing key is set to them.
     *
     * @param key the key
     * @param value the bytes; kept as given if the key was missing
     * @throws StoreException naming the store and key if the value would pass the largest array
     */
    public void append(String key, byte[] value) {
        append(key, value, Stores.MAX_VALUE_BYTES);
    }

    /**
     * Appends bytes to a key's value, up to a size; a missing key is set to them. The value grows
     * in place with room to spare (at most half its size again, never past {@code maxBytes}), so a
     * run of appends costs time in proportion to the bytes appended.
     *
     * @param key the key
     * @param value the bytes; kept as given if the key was missing
     * @param maxBytes the largest value it may make; at most {@link Stores#MAX_VALUE_BYTES}
     * @throws StoreException naming the store, the key and the sizes if the value would pass {@code
     *     maxBytes} (the value is then unchanged)
     */
    public void append(String key, byte[] value, long maxBytes) {
        Growing g = growing.get(key);
        byte[] old = g == null ? values.get(key) : null;
        long size = (g != null ? g.length : old == null ? 0L : old.length) + value.length;
        long limit = Math.min(maxBytes, Stores.MAX_VALUE_BYTES);
        if (size > limit) {
            throw new StoreException(
                    store
                            + ": append to key '"
                            + key
                            + "' would make a value of "
                            + size
                            + " bytes, past the limit of "
                            + limit);
        }
        if (g == null) {
            if (old == null) {
                values.put(key, value);
                return;
            }
            g = new Growing(old, (int) size, limit);
            values.remove(key);
            growing.put(key, g);
        }
        g.append(value, (int) size, limit);
    }

    /**
     * Deletes a key's value.
     *
     * @param key the key
     * @return whether it had one
     */
    public boolean delete(String key) {
        return values.remove(key) != null | growing.remove(key) != null;
    }

    /**
     * Returns the number of keys with a value.
     *
     * @return the count, queues aside
     */
    public long size() {
        return values.size() + growing.size();
    }

    /**
     * Returns the keys with a value.
     *
     * @return a new list, in no particular order
     */
    public List<String> keys() {
        List<String> keys = new ArrayList<>(values.size() + growing.size());
        keys.addAll(values.keySet());
        keys.addAll(growing.keySet());
        return keys;
    }

    /**
     * Returns whether a key exists for check and wait: it has a value or a non-empty queue.
     *
     * @param key the key
     * @return whether it exists
     */
    public boolean exists(String key) {
        return hasValue(key) || queues.containsKey(key);
    }

    /**
     * Returns whether a key's queue has an item.
     *
     * @param key the queue's key
     * @return whether {@link #queuePop} would return one
     */
    public boolean hasQueue(String key) {
        return queues.containsKey(key);
    }

    /**
     * Appends to a queue, creating it if needed.
     *
     * @param key the queue's key
     * @param value the item, kept as given
     */
    public void queuePush(String key, byte[] value) {
        queues.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(value);
    }

    /**
     * Removes a queue's oldest item; a queue emptied is forgotten, so its key no longer exists.
     *
     * @param key the queue's key
     * @return the item, or {@code null} if the queue is empty
     */
    public byte[] queuePop(String key) {
        ArrayDeque<byte[]> queue = queues.get(key);
        if (queue == null) {
            return null;
        }
        byte[] value = queue.pollFirst();
        if (queue.isEmpty()) {
            queues.remove(key);
        }
        return value;
    }

    /**
     * Returns a queue's length.
     *
     * @param key the queue's key
     * @return its number of items, 0 if it has none
     */
    public long queueLength(String key) {
        ArrayDeque<byte[]> queue = queues.get(key);
        return queue == null ? 0 : queue.size();
    }

    /** A value being appended to: its first {@code length} bytes of {@code buffer}. */
    private static final class Growing {
        private byte[] buffer;
        private int length;

        // Starts from a value that is about to take size bytes: room for them and half as many
        // more.
        Growing(byte[] value, int size, long limit) {
            buffer = Arrays.copyOf(value, capacity(size, limit));
            length = value.length;
        }

        void append(byte[] value, int size, long limit) {
            if (size > buffer.length) {
                buffer = Arrays.copyOf(buffer, capacity(size, limit));
            }
            System.arraycopy(value, 0, buffer, length, value.length);
            length = size;
        }

        byte[] toArray() {
            return length == buffer.length ? buffer : Arrays.copyOf(buffer, length);
        }

        // ArrayList's growth, 1.5x, within the limit: each byte is copied a bounded number of
        // times over a run of appends, and the spare room is at most a third of the buffer.
        private static int capacity(int size, long limit) {
            return (int) Math.min((long) size + (size >> 1), limit);
        }
    }
}
