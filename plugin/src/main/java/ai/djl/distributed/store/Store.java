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

import ai.djl.distributed.NotSupportedException;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A key-value store through which the ranks of a job meet: the counterpart of {@code
 * torch.distributed.Store}.
 *
 * <p>Keys are strings and values are opaque bytes ({@code String} overloads encode UTF-8). Keys are
 * the user's keys exactly as a Python rank passes them: an implementation that shares a medium with
 * PyTorch (a {@link FileStore} file, a TCPStore server) lays them out as PyTorch does.
 *
 * <p><b>Blocking.</b> {@link #get}, {@link #waitFor} and a blocking {@link #queuePop} block until
 * their keys exist or the timeout expires, then throw {@link StoreTimeoutException} naming the keys
 * and the duration. Every other call returns as soon as the store has answered; a remote store
 * bounds those by the store timeout too. The default timeout is {@link #DEFAULT_TIMEOUT}, as in
 * PyTorch, and is changed with {@link #setTimeout}; there is no infinite timeout.
 *
 * <p><b>Thread safety.</b> Every implementation is safe for concurrent use by many threads; a
 * remote store serialises the calls of one instance on its connection, as PyTorch's client does.
 *
 * <p><b>Extended API.</b> {@link #append}, {@link #multiGet} and {@link #multiSet} work on every
 * store: an implementation without a native form falls back to a {@code compareSet} loop or one
 * call per key, as PyTorch does, and reports {@code false} from {@link #hasExtendedApi}. Queues
 * exist only where a store says so; elsewhere they throw {@link NotSupportedException}.
 */
public interface Store extends AutoCloseable {

    /** The default timeout of blocking calls: 300 seconds, PyTorch's {@code kDefaultTimeout}. */
    Duration DEFAULT_TIMEOUT = Duration.ofSeconds(300);

    /**
     * Sets a key to a value, replacing any previous value, and wakes whoever waits for it.
     *
     * @param key the key
     * @param value the value; the store keeps its own copy
     */
    void set(String key, byte[] value);

    /**
     * Sets a key to the UTF-8 bytes of a string.
     *
     * @param key the key
     * @param value the value
     */
    default void set(String key, String value) {
        set(key, value.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Returns a key's value, blocking until the key exists or the store timeout expires.
     *
     * @param key the key
     * @return a copy of the value
     * @throws StoreTimeoutException if the key did not appear in time
     */
    byte[] get(String key);

    /**
     * Returns a key's value decoded as UTF-8, blocking as {@link #get} does.
     *
     * @param key the key
     * @return the value as a string
     */
    default String getString(String key) {
        return new String(get(key), StandardCharsets.UTF_8);
    }

    /**
     * Atomically adds to a counter and returns its new value. A missing key counts as 0; the value
     * is kept as decimal ASCII, so {@code get} of a counter returns e.g. {@code "21"}.
     *
     * @param key the counter's key
     * @param delta the amount to add, possibly 0 or negative
     * @return the value after the addition
     * @throws StoreException if the key holds something that is not a decimal integer
     */
    long add(String key, long delta);

    /**
     * Atomically replaces a value if it equals {@code expected}, with PyTorch's semantics: a
     * missing key with an empty {@code expected} is created; a missing key with a non-empty {@code
     * expected} is left missing and {@code expected} is returned.
     *
     * @param key the key
     * @param expected the value the caller believes is current; empty for "absent"
     * @param desired the value to install
     * @return {@code desired} if it was installed, otherwise the current value (or {@code expected}
     *     for a missing key)
     */
    byte[] compareSet(String key, byte[] expected, byte[] desired);

    /**
     * Deletes a key. Waiters are not woken.
     *
     * @param key the key
     * @return whether the key existed ({@link FileStore} always says {@code true}, as PyTorch's)
     */
    boolean deleteKey(String key);

    /**
     * Returns whether every key exists, without waiting for any of them. Reaching the store itself
     * may still take up to its timeout: a {@link FileStore} waits for its file to exist, and a
     * {@code TcpStore} for the server's reply, as PyTorch's do.
     *
     * @param keys the keys
     * @return {@code true} if all of them exist
     */
    boolean check(List<String> keys);

    /**
     * Blocks until every key exists, for at most the store timeout. This is PyTorch's {@code
     * wait(keys)}; it is named {@code waitFor} to stay clear of {@link Object#wait()}.
     *
     * @param keys the keys
     * @throws StoreTimeoutException if some key did not appear in time
     */
    default void waitFor(List<String> keys) {
        waitFor(keys, getTimeout());
    }

    /**
     * Blocks until every key exists, for at most {@code timeout}.
     *
     * @param keys the keys
     * @param timeout how long to wait; must be positive
     * @throws StoreTimeoutException if some key did not appear in time
     */
    void waitFor(List<String> keys, Duration timeout);

    /**
     * Returns the number of keys in the store, counting internal ones as PyTorch does ({@code
     * init/} on a TCPStore, {@code refcount/} in a file); a {@link PrefixStore} reports the whole
     * underlying store.
     *
     * @return the number of keys
     */
    long numKeys();

    /**
     * Appends bytes to a key's value, creating the key if it is missing, and wakes its waiters.
     *
     * <p>Every store of this library appends atomically. The default, for other implementations, is
     * a {@link #compareSet} loop (as PyTorch's fallback): it cannot tell its own success from
     * another caller's append of the same bytes meanwhile, so under concurrent appends of equal
     * bytes one of them can be lost; an implementation should override it with an atomic update.
     *
     * @param key the key
     * @param value the bytes to append
     */
    default void append(String key, byte[] value) {
        // A compareSet loop, like PyTorch's fallback, but seeded with the current value: seeded
        // with "" (as PyTorch does) it wrongly stops when the value already equals the bytes
        // being appended. It still cannot tell a success from another appender having installed
        // the same bytes meanwhile, and then loses one append: stores override it atomically.
        // The seed is read by a compareSet that expects bytes no key holds (random), so it changes
        // nothing and answers the current value, or echoes them if the key is missing; a check
        // then a get would wait out the timeout for a key deleted between the two.
        byte[] probe = new byte[16];
        ThreadLocalRandom.current().nextBytes(probe);
        byte[] current = compareSet(key, probe, probe);
        byte[] expected = Arrays.equals(current, probe) ? new byte[0] : current;
        while (true) {
            byte[] desired = Stores.concat(expected, value);
            byte[] actual = compareSet(key, expected, desired);
            if (Arrays.equals(actual, desired)) {
                return;
            }
            // A failed compareSet returns the current value, or echoes a non-empty expected
            // when the key has gone (deleted meanwhile): start again from "" then.
            expected = Arrays.equals(actual, expected) ? new byte[0] : actual;
        }
    }

    /**
     * Returns the values of several keys, blocking until all exist as {@link #get} does.
     *
     * @param keys the keys
     * @return the values, in the order of {@code keys}
     * @throws IllegalArgumentException if the list or a key is null, or a key holds an unpaired
     *     surrogate
     */
    default List<byte[]> multiGet(List<String> keys) {
        List<byte[]> values = new ArrayList<>(Stores.checkKeys(keys).size());
        for (String key : keys) {
            values.add(get(key));
        }
        return values;
    }

    /**
     * Sets several keys.
     *
     * @param keys the keys
     * @param values their values, as many as keys
     */
    default void multiSet(List<String> keys, List<byte[]> values) {
        Stores.checkSameSize(keys, values);
        for (int i = 0; i < keys.size(); ++i) {
            set(keys.get(i), values.get(i));
        }
    }

    /**
     * Returns whether {@link #append}, {@link #multiGet} and {@link #multiSet} are native rather
     * than fallbacks.
     *
     * @return {@code true} for a native extended API
     */
    default boolean hasExtendedApi() {
        return false;
    }

    /**
     * Pushes a value onto the tail of a queue; queues live apart from ordinary keys.
     *
     * @param key the queue's name
     * @param value the value
     * @throws NotSupportedException if this store has no queues
     */
    default void queuePush(String key, byte[] value) {
        throw new NotSupportedException(getClass().getSimpleName(), "queuePush");
    }

    /**
     * Pops the head of a queue, blocking until one is there or the store timeout expires.
     *
     * @param key the queue's name
     * @return the value
     * @throws StoreTimeoutException if the queue stayed empty
     * @throws NotSupportedException if this store has no queues
     */
    default byte[] queuePop(String key) {
        throw new NotSupportedException(getClass().getSimpleName(), "queuePop");
    }

    /**
     * Pops the head of a queue without blocking.
     *
     * @param key the queue's name
     * @return the value, or empty if the queue is empty
     * @throws NotSupportedException if this store has no queues
     */
    default Optional<byte[]> queueTryPop(String key) {
        throw new NotSupportedException(getClass().getSimpleName(), "queueTryPop");
    }

    /**
     * Returns the length of a queue.
     *
     * @param key the queue's name
     * @return the number of values in it
     * @throws NotSupportedException if this store has no queues
     */
    default long queueLength(String key) {
        throw new NotSupportedException(getClass().getSimpleName(), "queueLength");
    }

    /**
     * Returns the timeout of blocking calls that take none.
     *
     * @return the timeout
     */
    Duration getTimeout();

    /**
     * Sets the timeout of blocking calls that take none.
     *
     * @param timeout the timeout; must be positive
     */
    void setTimeout(Duration timeout);

    /** Releases what the store owns (connections, threads, file references); idempotent. */
    @Override
    void close();
}
