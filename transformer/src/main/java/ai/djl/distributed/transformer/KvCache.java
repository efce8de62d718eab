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
package ai.djl.distributed.transformer;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;

/**
 * The keys and values a {@link GptModel} computed for the positions it has already read, so that
 * generating one more token costs one position's work instead of the whole sequence's.
 *
 * <p>Holds, per layer, keys and values of shape {@code (batch, heads, length, headWidth)} in its
 * own {@link NDManager}, released by {@link #close()}. Not thread-safe: one generation at a time.
 */
public final class KvCache implements AutoCloseable {

    private final NDManager manager;
    private final NDArray[] keys;
    private final NDArray[] values;
    private final int capacity;
    private int length;

    /**
     * Creates an empty cache for a model.
     *
     * @param parent the manager whose sub-manager will hold the cached arrays
     * @param config the model's configuration (layers and context length)
     */
    public KvCache(NDManager parent, GptConfig config) {
        manager = parent.newSubManager();
        keys = new NDArray[config.getLayers()];
        values = new NDArray[config.getLayers()];
        capacity = config.getContextLength();
    }

    /**
     * Returns the number of positions cached.
     *
     * @return the cached length
     */
    public int length() {
        return length;
    }

    /**
     * Returns how many positions the cache can hold: the model's context length.
     *
     * @return the capacity
     */
    public int capacity() {
        return capacity;
    }

    /** Forgets every cached position. */
    public void clear() {
        for (int i = 0; i < keys.length; i++) {
            closeQuietly(keys[i]);
            closeQuietly(values[i]);
            keys[i] = null;
            values[i] = null;
        }
        length = 0;
    }

    /**
     * Appends one layer's keys and values for the new positions and returns that layer's keys and
     * values for every position so far.
     *
     * @param layer the layer
     * @param k the new keys, {@code (batch, heads, n, headWidth)}
     * @param v the new values, of the same shape
     * @return the keys and values of all {@code length() + n} positions
     */
    NDArray[] append(int layer, NDArray k, NDArray v) {
        keys[layer] = concat(keys[layer], k);
        values[layer] = concat(values[layer], v);
        return new NDArray[] {keys[layer], values[layer]};
    }

    /**
     * Records that every layer has appended {@code n} positions.
     *
     * @param n the number of positions just appended
     */
    void advance(int n) {
        length += n;
    }

    /**
     * Forgets what layers appended beyond {@link #length()}: after a forward pass that failed part
     * way, the layers before the failure hold one step more than the others, and a retry would
     * attend to those keys twice.
     */
    void rollBack() {
        for (int i = 0; i < keys.length; i++) {
            keys[i] = truncate(keys[i]);
            values[i] = truncate(values[i]);
        }
    }

    private NDArray truncate(NDArray cached) {
        if (cached == null || cached.getShape().get(2) == length) {
            return cached;
        }
        NDArray kept = null;
        if (length > 0) {
            kept = cached.get(new NDIndex(":, :, 0:" + length)).duplicate();
            kept.attach(manager);
        }
        cached.close();
        return kept;
    }

    private NDArray concat(NDArray old, NDArray fresh) {
        NDArray all = old == null ? fresh : NDArrays.concat(new NDList(old, fresh), 2);
        all.attach(manager);
        if (old != null) {
            old.close();
        }
        return all;
    }

    private static void closeQuietly(NDArray array) {
        if (array != null) {
            array.close();
        }
    }

    /** Releases the cached arrays. Idempotent. */
    @Override
    public void close() {
        manager.close();
        length = 0;
    }
}
