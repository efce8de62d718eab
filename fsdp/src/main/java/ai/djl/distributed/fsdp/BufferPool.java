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
package ai.djl.distributed.fsdp;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Map;

/**
 * Flat float32 arrays kept for reuse, by length: FSDP's gathered parameters, packed gradients and
 * reduce-scatter outputs are the same few sizes every step (the transformer blocks' units are
 * alike), and allocating them afresh each time fragments the C heap until resident memory grows
 * step after step. PyTorch gets the same from its caching allocator. Holds at most what was in use
 * at once. Not thread-safe: the training thread takes and gives.
 */
final class BufferPool implements AutoCloseable {

    private final NDManager manager;
    private final Map<Long, ArrayDeque<NDArray>> free = new HashMap<>();
    private final Map<NDArray, StorageResize> emptied = new IdentityHashMap<>();

    BufferPool(NDManager parent) {
        manager = parent.newSubManager();
    }

    /**
     * Returns an array of {@code n} elements, reused (its values stale) or new (zeros).
     *
     * @param n the length
     * @return the array; give it back when done
     */
    NDArray take(long n) {
        ArrayDeque<NDArray> q = free.get(n);
        if (q != null && !q.isEmpty()) {
            NDArray a = q.pop();
            StorageResize r = emptied.remove(a);
            if (r != null) {
                r.restore(a);
            }
            return a;
        }
        return manager.zeros(new Shape(n), DataType.FLOAT32);
    }

    /** Takes back an array {@link #take} gave. */
    void give(NDArray array) {
        free.computeIfAbsent(array.size(), k -> new ArrayDeque<>()).push(array);
    }

    /**
     * Takes back an array whose memory is freed ({@link StorageResize#free}): held as an empty
     * array, so that the pool holds no memory for it, and given out again with its memory allocated
     * anew.
     */
    void giveEmptied(NDArray array, StorageResize resize) {
        emptied.put(array, resize);
        give(array);
    }

    /** The number of arrays held without memory ({@link #giveEmptied}). */
    int emptiedCount() {
        return emptied.size();
    }

    /** Whether this very array is held for reuse (tests read it). */
    boolean holds(NDArray array) {
        ArrayDeque<NDArray> q = free.get(array.size());
        return q != null && q.stream().anyMatch(a -> a == array);
    }

    /** Frees every array, given back or not. */
    @Override
    public void close() {
        free.clear();
        emptied.clear();
        manager.close();
    }
}
