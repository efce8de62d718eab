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
package ai.djl.distributed.backend.nccl;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.store.Store;

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * Shares a communicator's unique id through the group's store with PyTorch's keys ({@code
 * ProcessGroupNCCL::broadcastUniqueNCCLID}), so that a Java rank and a Python rank can one day meet
 * in one NCCL job:
 *
 * <ul>
 *   <li>the store is the one the process group gives a GPU backend, PyTorch's {@code
 *       PrefixStore("cuda/", PrefixStore("<group name>/", store))}; PyTorch's prefixes end in
 *       {@code "/"} and {@code PrefixStore} adds one, so the default group's first id lies at
 *       {@code default_pg/0//cuda//0} of the TCP store;
 *   <li>a communicator of the whole group takes the key {@code <counter>}, the group's count of
 *       communicators made so far, from 0; rank 0 sets it to the 128 bytes, the others wait for it
 *       and get it;
 *   <li>a communicator of one point-to-point pair takes {@code <low>:<high>} (the two group ranks)
 *       and does not advance the counter (only two ranks make it); the lower rank sets it.
 * </ul>
 *
 * Every rank must create communicators in the same order, as every collective. Thread-safe; waits
 * are bounded by the timeout given.
 */
public final class UniqueIdExchange {

    private final Store store;
    private final int rank;
    private final Duration timeout;
    private long counter; // guarded by this

    /**
     * Creates the exchange of one group's backend.
     *
     * @param store the backend's store (PyTorch's {@code cuda/} store of the group)
     * @param rank this rank in the group
     * @param timeout the bound of each wait for a peer's id
     */
    public UniqueIdExchange(Store store, int rank, Duration timeout) {
        if (store == null) {
            throw new IllegalArgumentException("store: null (expected: the group's store)");
        }
        if (rank < 0) {
            throw new IllegalArgumentException("rank: " + rank + " (expected: >= 0)");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
        }
        this.store = store;
        this.rank = rank;
        this.timeout = timeout;
    }

    /**
     * Returns the key of a point-to-point pair's communicator.
     *
     * @param a one rank
     * @param b the other
     * @return {@code "<low>:<high>"}
     */
    public static String pairKey(int a, int b) {
        return Math.min(a, b) + ":" + Math.max(a, b);
    }

    /**
     * Shares the id of the group's next communicator: rank 0 makes and publishes it, the others
     * wait for it.
     *
     * @param makeId makes a new id ({@code ncclGetUniqueId}); called on rank 0 only
     * @return the id's 128 bytes
     * @throws ai.djl.distributed.store.StoreTimeoutException if rank 0's id does not come in time
     * @throws DistributedException if what came is not an id
     */
    public byte[] shareForGroup(Supplier<byte[]> makeId) {
        String key;
        synchronized (this) {
            key = String.valueOf(counter++);
        }
        return exchange(key, rank == 0, makeId);
    }

    /**
     * Shares the id of the communicator of this rank and a peer: the lower rank makes and publishes
     * it.
     *
     * @param peer the other rank of the pair
     * @param makeId makes a new id; called on the lower rank only
     * @return the id's 128 bytes
     * @throws ai.djl.distributed.store.StoreTimeoutException if the peer's id does not come in time
     * @throws DistributedException if what came is not an id
     */
    public byte[] shareForPair(int peer, Supplier<byte[]> makeId) {
        return exchange(pairKey(rank, peer), rank <= peer, makeId);
    }

    /**
     * Returns how many group communicators this exchange has keyed.
     *
     * @return the counter
     */
    public synchronized long count() {
        return counter;
    }

    private byte[] exchange(String key, boolean publisher, Supplier<byte[]> makeId) {
        if (publisher) {
            byte[] id = checked(makeId.get(), key);
            store.set(key, id);
            return id;
        }
        store.waitFor(List.of(key), timeout);
        return checked(store.get(key), key);
    }

    private byte[] checked(byte[] id, String key) {
        if (id == null || id.length != NcclUniqueId.BYTES) {
            throw new DistributedException(
                    "NCCL unique id at key '"
                            + key
                            + "' of "
                            + store
                            + ": "
                            + (id == null ? "null" : id.length + " bytes")
                            + " (expected: "
                            + NcclUniqueId.BYTES
                            + " bytes)");
        }
        return id.clone();
    }
}
