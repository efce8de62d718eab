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
package ai.djl.distributed.ddp;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;

import java.util.List;

/**
 * One bucket of gradients as a {@link CommHook} sees it, as PyTorch's {@code GradBucket}: a flat
 * buffer holding the gradients of some parameters back to back, and where each one lies.
 *
 * <p>The buffer belongs to the reducer and is reused every step; a hook may reduce it in place. The
 * per-step {@link #getManager() manager} is closed once the step has consumed the hook's result:
 * attach every array a hook creates to it.
 */
public final class GradBucket {

    private final int index;
    private final boolean last;
    private final NDArray buffer;
    private final List<String> names;
    private final long[] offsets;
    private final long[] lengths;
    private final NDManager manager;

    GradBucket(
            int index,
            boolean last,
            NDArray buffer,
            List<String> names,
            long[] offsets,
            long[] lengths,
            NDManager manager) {
        this.index = index;
        this.last = last;
        this.buffer = buffer;
        this.names = names;
        this.offsets = offsets;
        this.lengths = lengths;
        this.manager = manager;
    }

    /**
     * Returns the bucket's position in reduction order. Indices change once, when the buckets are
     * rebuilt after the first step.
     *
     * @return the index, from 0
     */
    public int getIndex() {
        return index;
    }

    /**
     * Returns whether this is the last bucket of the step.
     *
     * @return whether it is last
     */
    public boolean isLast() {
        return last;
    }

    /**
     * Returns the flat buffer: this rank's gradients, one dimension, the parameters' data type.
     *
     * @return the buffer; owned by the reducer
     */
    public NDArray getBuffer() {
        return buffer;
    }

    /**
     * Returns the names of the bucket's parameters, in buffer order.
     *
     * @return the names
     */
    public List<String> getParameterNames() {
        return names;
    }

    /**
     * Returns where a parameter's gradient starts in the buffer.
     *
     * @param i the parameter's position in {@link #getParameterNames()}
     * @return the offset, in elements
     */
    public long getOffset(int i) {
        return offsets[i];
    }

    /**
     * Returns the number of elements of a parameter's gradient.
     *
     * @param i the parameter's position in {@link #getParameterNames()}
     * @return the length, in elements
     */
    public long getLength(int i) {
        return lengths[i];
    }

    /**
     * Returns the manager for the hook's temporary arrays, closed after this step.
     *
     * @return the manager
     */
    public NDManager getManager() {
        return manager;
    }
}
