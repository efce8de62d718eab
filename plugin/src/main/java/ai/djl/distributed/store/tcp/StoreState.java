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

import ai.djl.distributed.store.KeyTable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The keys, queues and waiters of one {@link TcpStoreServer}, shared by all its connections. Every
 * method takes the one lock. A write that satisfies a WAIT queues the waiter's STOP_WAITING while
 * still holding the lock, so a CANCEL_WAIT handled afterwards always replies behind it. Keys are
 * raw key bytes held in ISO-8859-1 strings; values are the decoded requests' own arrays.
 */
final class StoreState {

    private final KeyTable table = new KeyTable("TcpStoreServer");
    private final Map<String, List<Waiter>> waiters = new HashMap<>();

    synchronized void set(String key, byte[] value) {
        table.set(key, value);
        satisfy(key);
    }

    synchronized byte[] get(String key) {
        return table.get(key);
    }

    /**
     * Adds to a counter kept as decimal ASCII.
     *
     * @return the new value
     * @throws ai.djl.distributed.store.StoreException if the current value is not a number
     */
    synchronized long add(String key, long delta) {
        long value = table.add(key, delta);
        satisfy(key);
        return value;
    }

    synchronized byte[] compareSet(String key, byte[] expected, byte[] desired) {
        byte[] result = table.compareSet(key, expected, desired);
        if (result == desired) {
            satisfy(key); // the table returns desired itself exactly when it stored it
        }
        return result;
    }

    synchronized void append(String key, byte[] value) {
        table.append(key, value);
        satisfy(key);
    }

    synchronized void multiSet(List<String> keys, List<byte[]> values) {
        for (int i = 0; i < keys.size(); ++i) {
            table.set(keys.get(i), values.get(i));
            satisfy(keys.get(i));
        }
    }

    synchronized List<byte[]> multiGet(List<String> keys) {
        List<byte[]> out = new ArrayList<>(keys.size());
        for (String key : keys) {
            out.add(table.get(key));
        }
        return out;
    }

    synchronized boolean delete(String key) {
        return table.delete(key);
    }

    synchronized long numKeys() {
        return table.size();
    }

    synchronized List<String> list() {
        return table.keys();
    }

    synchronized boolean check(List<String> keys) {
        for (String key : keys) {
            if (!table.exists(key)) {
                return false;
            }
        }
        return true;
    }

    /**
     * Registers a WAIT, replacing any earlier one of the same waiter.
     *
     * @return {@code true} if every key already exists (nothing registered)
     */
    synchronized boolean await(Waiter waiter, List<String> keys) {
        cancel(waiter);
        List<String> missing = new ArrayList<>(keys.size());
        for (String key : keys) {
            if (!table.exists(key)) {
                missing.add(key);
            }
        }
        if (missing.isEmpty()) {
            return true;
        }
        for (String key : missing) {
            waiters.computeIfAbsent(key, k -> new ArrayList<>(2)).add(waiter);
        }
        waiter.keys = missing;
        waiter.missing = missing.size();
        return false;
    }

    /**
     * Forgets a waiter's WAIT, if any (CANCEL_WAIT, or its connection closed).
     *
     * @return {@code true} if the waiter was waiting: no write has woken it, and none will
     */
    synchronized boolean cancel(Waiter waiter) {
        if (waiter.missing == 0) {
            return false;
        }
        for (String key : waiter.keys) {
            List<Waiter> list = waiters.get(key);
            if (list != null && list.remove(waiter) && list.isEmpty()) {
                waiters.remove(key);
            }
        }
        waiter.keys = List.of();
        waiter.missing = 0;
        return true;
    }

    /** Pushes onto a queue; wakes at most one waiter, the one a pop would then serve. */
    synchronized void queuePush(String key, byte[] value) {
        table.queuePush(key, value);
        List<Waiter> list = waiters.get(key);
        if (list == null) {
            return;
        }
        for (Waiter w : list) {
            if (w.missing == 1) {
                list.remove(w);
                if (list.isEmpty()) {
                    waiters.remove(key);
                }
                w.missing = 0;
                w.keys = List.of();
                w.wake();
                return;
            }
        }
    }

    /** Pops a queue's head; returns {@code null} if it is empty. */
    synchronized byte[] queuePop(String key) {
        return table.queuePop(key);
    }

    synchronized long queueLength(String key) {
        return table.queueLength(key);
    }

    // A write to key: each waiter registered on it misses one key fewer; those at 0 are woken.
    private void satisfy(String key) {
        List<Waiter> list = waiters.remove(key);
        if (list == null) {
            return;
        }
        for (Waiter w : list) {
            if (--w.missing == 0) {
                w.keys = List.of();
                w.wake();
            }
        }
    }
}
