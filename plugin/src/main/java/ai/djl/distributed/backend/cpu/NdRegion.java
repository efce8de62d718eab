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
package ai.djl.distributed.backend.cpu;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;

import com.sun.jna.Native;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The bytes of a CPU NDArray as a little-endian {@link ByteBuffer}. For a contiguous PyTorch array
 * the buffer is the array's own memory ({@code toByteBuffer(true)}), so collectives read and write
 * it in place; otherwise (a transposed array, a column of a matrix) it is a copy of our own, which
 * {@link #writeBack()} writes into the array in place, and so into the array it is a view of, as
 * PyTorch's in-place collectives do.
 */
final class NdRegion {

    private final NDArray array;
    private final ByteBuffer buffer;
    private final boolean shared;

    private NdRegion(NDArray array, ByteBuffer buffer, boolean shared) {
        this.array = array;
        this.buffer = buffer;
        this.shared = shared;
    }

    /**
     * Views an array's bytes.
     *
     * @param array a CPU array
     * @return the region: the array's own memory, or a copy when the array is not contiguous
     */
    static NdRegion of(NDArray array) {
        if (array.size() == 0) {
            return new NdRegion(array, ByteBuffer.allocate(0), true);
        }
        // DJL's toByteBuffer(true) on an array that is not contiguous makes a contiguous copy and
        // leaves it in the array's manager until that manager closes. So it is asked of a private
        // alias of the array (the same memory and strides, detached), in a scope of ours that
        // frees such copies: two answers share memory exactly when the array is contiguous.
        try (NDManager scope = array.getManager().newSubManager()) {
            NDArray alias = array.stopGradient();
            alias.attach(scope);
            ByteBuffer a = alias.toByteBuffer(true);
            ByteBuffer b = alias.toByteBuffer(true);
            if (Native.getDirectBufferPointer(a).equals(Native.getDirectBufferPointer(b))) {
                // The array's own memory, which outlives the alias.
                return new NdRegion(array, a.order(ByteOrder.LITTLE_ENDIAN).clear(), true);
            }
            ByteBuffer copy =
                    ByteBuffer.allocateDirect(a.remaining()).order(ByteOrder.LITTLE_ENDIAN);
            copy.put(a).flip();
            return new NdRegion(array, copy, false);
        }
    }

    ByteBuffer buffer() {
        return buffer;
    }

    /**
     * Copies the buffer into the array when it is not the array's own memory: in place ({@code
     * index_put_}), so that a view writes through to the array it views. ({@code
     * NDArray.set(Buffer)} would give the view new storage of its own instead.)
     */
    void writeBack() {
        if (shared) {
            return;
        }
        // Through a detached alias (the same memory): an in-place write into a view of an array
        // that takes gradients is refused by autograd, and a collective's result is no step of
        // the graph, as under PyTorch's no_grad.
        try (NDManager scope = array.getManager().newSubManager()) {
            NDArray result = scope.create(buffer.clear(), array.getShape(), array.getDataType());
            NDArray alias = array.stopGradient();
            try {
                alias.set(new NDIndex("..."), result);
            } finally {
                alias.close();
            }
        }
    }
}
