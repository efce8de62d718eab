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

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Predicate;

/**
 * A store inside one process, shared by threads: PyTorch's {@code HashStore}. Useful for the
 * in-process multi-rank harness and for single-process jobs.
 *
 * <p>Every write wakes the waiters (unlike PyTorch's, whose {@code add} wakes nobody, a quirk no
 * caller relies on). It has the native extended API and queues. {@link #close()} does nothing: the
 * store owns no resources, and threads still holding it may go on using it.
 */
public final class HashStore implements Store {

    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final Map<String, byte[]> map = new HashMap<>();
    private final Map<String, Deque<byte[]>> queues = new HashMap<>();
    private volatile Duration timeout = DEFAULT_TIMEOUT;

    /** {@inheritDoc} */
    @Override
    public void set(String key, byte[] value) {
        Stores.checkKey(key);
        byte[] copy = Stores.checkValue("value", value).clone();
        lock.lock();
        try {
            map.put(key, copy);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public byte[] get(String key) {
        List<String> keys = List.of(Stores.checkKey(key));
        lock.lock();
        try {
            awaitLocked(keys, timeout, map::containsKey);
            return map.get(key).clone();
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public long add(String key, long delta) {
        Stores.checkKey(key);
        lock.lock();
        try {
            byte[] old = map.get(key);
            long value = (old == null ? 0 : Stores.parseCounter(toString(), key, old)) + delta;
            map.put(key, Stores.formatCounter(value));
            changed.signalAll();
            return value;
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        Stores.checkKey(key);
        Stores.checkValue("expected", expected);
        Stores.checkValue("desired", desired);
        lock.lock();
        try {
            byte[] current = map.get(key);
            if (current == null) {
                if (expected.length == 0) {
                    map.put(key, desired.clone());
                    changed.signalAll();
                    return desired.clone();
                }
                return expected.clone();
            }
            if (Arrays.equals(current, expected)) {
                map.put(key, desired.clone());
                changed.signalAll();
                return desired.clone();
            }
            return current.clone();
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public boolean deleteKey(String key) {
        Stores.checkKey(key);
        lock.lock();
        try {
            return map.remove(key) != null;
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public boolean check(List<String> keys) {
        Stores.checkKeys(keys);
        lock.lock();
        try {
            return allPresentLocked(keys);
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public void waitFor(List<String> keys, Duration timeout) {
        Stores.checkKeys(keys);
        Stores.checkTimeout(timeout);
        lock.lock();
        try {
            awaitLocked(keys, timeout, this::existsLocked);
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public long numKeys() {
        lock.lock();
        try {
            return map.size();
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public void append(String key, byte[] value) {
        Stores.checkKey(key);
        Stores.checkValue("value", value);
        lock.lock();
        try {
            byte[] old = map.get(key);
            map.put(key, old == null ? value.clone() : Stores.concat(old, value));
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public List<byte[]> multiGet(List<String> keys) {
        Stores.checkKeys(keys);
        lock.lock();
        try {
            awaitLocked(keys, timeout, map::containsKey);
            List<byte[]> values = new ArrayList<>(keys.size());
            for (String key : keys) {
                values.add(map.get(key).clone());
            }
            return values;
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public void multiSet(List<String> keys, List<byte[]> values) {
        Stores.checkKeys(keys);
        Stores.checkSameSize(keys, values);
        lock.lock();
        try {
            for (int i = 0; i < keys.size(); ++i) {
                map.put(keys.get(i), values.get(i).clone());
            }
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public boolean hasExtendedApi() {
        return true;
    }

    /** {@inheritDoc} */
    @Override
    public void queuePush(String key, byte[] value) {
        Stores.checkKey(key);
        byte[] copy = Stores.checkValue("value", value).clone();
        lock.lock();
        try {
            queues.computeIfAbsent(key, k -> new ArrayDeque<>()).addLast(copy);
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public byte[] queuePop(String key) {
        List<String> keys = List.of(Stores.checkKey(key));
        lock.lock();
        try {
            awaitLocked(keys, timeout, queues::containsKey);
            return pollLocked(key);
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public Optional<byte[]> queueTryPop(String key) {
        Stores.checkKey(key);
        lock.lock();
        try {
            return Optional.ofNullable(pollLocked(key));
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public long queueLength(String key) {
        Stores.checkKey(key);
        lock.lock();
        try {
            Deque<byte[]> queue = queues.get(key);
            return queue == null ? 0 : queue.size();
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public Duration getTimeout() {
        return timeout;
    }

    /** {@inheritDoc} */
    @Override
    public void setTimeout(Duration timeout) {
        this.timeout = Stores.checkTimeout(timeout);
    }

    /** {@inheritDoc} */
    @Override
    public void close() {}

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "HashStore@" + Integer.toHexString(System.identityHashCode(this));
    }

    private byte[] pollLocked(String key) {
        Deque<byte[]> queue = queues.get(key);
        if (queue == null) {
            return null;
        }
        byte[] value = queue.pollFirst();
        if (queue.isEmpty()) {
            queues.remove(key);
        }
        return value;
    }

    // As in PyTorch, a non-empty queue of that name satisfies check and wait.
    private boolean existsLocked(String key) {
        return map.containsKey(key) || queues.containsKey(key);
    }

    private boolean allPresentLocked(List<String> keys) {
        return keys.stream().allMatch(this::existsLocked);
    }

    // get waits for values, queuePop for queue items, waitFor for either.
    private void awaitLocked(List<String> keys, Duration timeout, Predicate<String> present) {
        long deadline = Stores.deadline(timeout);
        while (!keys.stream().allMatch(present)) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new StoreTimeoutException(toString(), keys, timeout);
            }
            try {
                changed.await(left, TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new StoreException(toString() + ": interrupted while waiting for " + keys, e);
            }
        }
    }
}
