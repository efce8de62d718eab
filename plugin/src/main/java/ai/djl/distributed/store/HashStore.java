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
import java.util.ArrayList;
import java.util.List;
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
    // Holds copies: callers may change their arrays after a call. Guarded by lock.
    private final KeyTable table = new KeyTable(toString());
    private volatile Duration timeout = DEFAULT_TIMEOUT;

    /** {@inheritDoc} */
    @Override
    public void set(String key, byte[] value) {
        Stores.checkKey(key);
        byte[] copy = Stores.checkValue("value", value).clone();
        lock.lock();
        try {
            table.set(key, copy);
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
            awaitLocked(keys, timeout, table::hasValue);
            return table.get(key).clone();
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
            byte[] old = table.get(key);
            if (old != null && old.length == 0) {
                // PyTorch's HashStore counts an empty value as 0 (its TCPStore server refuses it).
                table.delete(key);
            }
            long value = table.add(key, delta);
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
            byte[] copy = desired.clone();
            byte[] result = table.compareSet(key, expected, copy);
            if (result == copy) {
                changed.signalAll(); // the table returns the copy itself exactly when it stored it
            }
            return result.clone();
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
            return table.delete(key);
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
            awaitLocked(keys, timeout, table::exists);
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public long numKeys() {
        lock.lock();
        try {
            return table.size();
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
            table.append(key, value.clone());
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
            awaitLocked(keys, timeout, table::hasValue);
            List<byte[]> values = new ArrayList<>(keys.size());
            for (String key : keys) {
                values.add(table.get(key).clone());
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
                table.set(keys.get(i), values.get(i).clone());
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
            table.queuePush(key, copy);
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
            awaitLocked(keys, timeout, table::hasQueue);
            return table.queuePop(key);
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
            return Optional.ofNullable(table.queuePop(key));
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
            return table.queueLength(key);
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

    private boolean allPresentLocked(List<String> keys) {
        return keys.stream().allMatch(table::exists);
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
