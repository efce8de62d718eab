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
 *
 * <p>A WAIT is registered once on each distinct key it misses, in a list per key kept in the order
 * the WAITs came; each registration is a node of that list, so a cancel removes each in O(1) and
 * costs what the WAIT's distinct keys are, never what other waiters on them are.
 */
final class StoreState {

    private final KeyTable table = new KeyTable("TcpStoreServer");
    private final Map<String, WaitList> waiters = new HashMap<>();

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

    /**
     * Appends to a value.
     *
     * @param maxBytes the largest value it may make
     * @throws ai.djl.distributed.store.StoreException if the value would pass {@code maxBytes}
     */
    synchronized void append(String key, byte[] value, long maxBytes) {
        table.append(key, value, maxBytes);
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
     * Registers a WAIT, replacing any earlier one of the same waiter. A key named more than once is
     * registered once, and one write of it releases it, as on PyTorch's server (which counts it
     * once per name, and a write of it once per name too).
     *
     * @return {@code true} if every key already exists (nothing registered)
     */
    synchronized boolean await(Waiter waiter, List<String> keys) {
        cancel(waiter);
        for (String key : keys) {
            if (!table.exists(key)) {
                register(waiter, key);
            }
        }
        return waiter.missing == 0;
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
        for (Registration r = waiter.registrations; r != null; r = r.sibling) {
            if (r.list != null) {
                unlink(r);
            }
        }
        waiter.registrations = null;
        waiter.missing = 0;
        return true;
    }

    /**
     * Pushes onto a queue. As on PyTorch's libuv server, the push counts for the waiters on the key
     * in the order they came, each one then no longer waiting for it (the queue exists), up to the
     * first it completes: that one is woken, the one a pop would then serve; the waiters after it
     * wait on.
     */
    synchronized void queuePush(String key, byte[] value) {
        table.queuePush(key, value);
        WaitList list = waiters.get(key);
        Registration r = list == null ? null : list.head;
        while (r != null) {
            Registration next = r.next;
            unlink(r);
            if (countDown(r.waiter)) {
                return;
            }
            r = next;
        }
    }

    /** Pops a queue's head; returns {@code null} if it is empty. */
    synchronized byte[] queuePop(String key) {
        return table.queuePop(key);
    }

    synchronized long queueLength(String key) {
        return table.queueLength(key);
    }

    /**
     * Returns how many WAITs are registered on a key.
     *
     * @param key the key
     * @return the registrations, 0 if none
     */
    synchronized int waitingOn(String key) {
        WaitList list = waiters.get(key);
        int n = 0;
        for (Registration r = list == null ? null : list.head; r != null; r = r.next) {
            ++n;
        }
        return n;
    }

    // A write to key: each waiter registered on it misses one key fewer; those at 0 are woken.
    private void satisfy(String key) {
        WaitList list = waiters.remove(key);
        Registration r = list == null ? null : list.head;
        while (r != null) {
            Registration next = r.next;
            r.list = null;
            r.prev = null;
            r.next = null;
            countDown(r.waiter);
            r = next;
        }
    }

    // One of a waiter's keys is there: wakes it if that was the last (true).
    private static boolean countDown(Waiter w) {
        if (--w.missing != 0) {
            return false;
        }
        w.registrations = null;
        w.wake();
        return true;
    }

    // Adds a waiter to a key's list, unless this WAIT named the key before: then the waiter is
    // the list's last (the lock is held since its first registration, and the waiter had none
    // before it: cancel() came first). No set of the WAIT's keys is needed to tell.
    private void register(Waiter waiter, String key) {
        WaitList list = waiters.get(key);
        if (list == null) {
            list = new WaitList(key);
            waiters.put(key, list);
        } else if (list.tail.waiter == waiter) {
            return;
        }
        // a waiter's first registration is its own node, reused: a WAIT on one key allocates
        // nothing
        Registration r = waiter.registrations == null ? waiter.own : new Registration(waiter);
        r.sibling = waiter.registrations;
        waiter.registrations = r;
        r.list = list;
        r.prev = list.tail;
        if (list.tail == null) {
            list.head = r;
        } else {
            list.tail.next = r;
        }
        list.tail = r;
        ++waiter.missing;
    }

    private void unlink(Registration r) {
        WaitList list = r.list;
        if (r.prev == null) {
            list.head = r.next;
        } else {
            r.prev.next = r.next;
        }
        if (r.next == null) {
            list.tail = r.prev;
        } else {
            r.next.prev = r.prev;
        }
        r.list = null;
        r.prev = null;
        r.next = null;
        if (list.head == null) {
            waiters.remove(list.key);
        }
    }

    /** The waiters registered on one key, in the order their WAITs came. */
    private static final class WaitList {
        final String key;
        Registration head;
        Registration tail;

        WaitList(String key) {
            this.key = key;
        }
    }

    /** One waiter registered on one key: a node of the key's list and of the waiter's chain. */
    static final class Registration {
        final Waiter waiter;
        WaitList list; // null once unlinked
        Registration prev;
        Registration next;
        Registration sibling; // the waiter's registration before this one, in the same WAIT

        Registration(Waiter waiter) {
            this.waiter = waiter;
        }
    }
}
