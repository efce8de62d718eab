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
package ai.djl.distributed.memory;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;

import com.sun.jna.Native;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The bytes of a CPU NDArray as a little-endian {@link ByteBuffer}: the memory path of the CPU
 * backend's collectives and of the data-parallel core's copies. DJL's PyTorch engine hands out a
 * contiguous tensor's own memory from {@code toByteBuffer(true)}, so such an array is read and
 * written in place at memory-copy speed, with no NDArray operation (no autograd history, no refused
 * in-place write to a leaf that requires gradients, no native call per element range). Otherwise (a
 * transposed array, a column of a matrix) {@link #of} makes a copy of our own, which {@link
 * #writeBack()} writes into the array in place, and so into the array it is a view of, as PyTorch's
 * in-place collectives do; {@link #view} refuses such an array instead.
 *
 * <p>The region does not own the array; the caller keeps it open while the buffer is in use. Not
 * thread-safe: one operation uses a region.
 */
public final class NdRegion {

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
    public static NdRegion of(NDArray array) {
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
            if (sameMemory(a, alias.toByteBuffer(true))) {
                // The array's own memory, which outlives the alias.
                return new NdRegion(array, a.order(ByteOrder.LITTLE_ENDIAN).clear(), true);
            }
            ByteBuffer copy =
                    ByteBuffer.allocateDirect(a.remaining()).order(ByteOrder.LITTLE_ENDIAN);
            copy.put(a).flip();
            return new NdRegion(array, copy, false);
        }
    }

    /**
     * Returns the array's own memory, for writing.
     *
     * @param array a contiguous CPU array
     * @param what names the array in the error
     * @return a little-endian view of its bytes
     * @throws IllegalArgumentException if DJL would only give a copy
     */
    public static ByteBuffer view(NDArray array, String what) {
        // Asked of the array itself, not of a scoped alias as in of(): this is the per-slot path
        // of every step, and a contiguous array hands out its own memory without any copy. Only
        // a refused array leaves its two probe copies in its manager until that manager closes.
        ByteBuffer b = array.toByteBuffer(true);
        if (!b.isDirect() || b.capacity() > 0 && !sameMemory(b, array.toByteBuffer(true))) {
            throw notContiguous(array, what);
        }
        return b.order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Returns the array's bytes for reading: its memory when contiguous, else a copy (which DJL
     * keeps in the array's manager until that manager closes).
     *
     * @param array a CPU array
     * @return a little-endian buffer of its bytes
     */
    public static ByteBuffer read(NDArray array) {
        return array.toByteBuffer(true).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Returns whether an array lives in host memory, where the memory path applies.
     *
     * @param array an array
     * @return whether its device is a CPU
     */
    public static boolean onCpu(NDArray array) {
        return Device.Type.CPU.equals(array.getDevice().getDeviceType());
    }

    /**
     * Returns the region's bytes: the array's own memory, or the copy {@link #writeBack()} writes.
     *
     * @return the little-endian buffer, positioned at 0
     */
    public ByteBuffer buffer() {
        return buffer;
    }

    /**
     * Copies the buffer into the array when it is not the array's own memory: in place ({@code
     * index_put_}), so that a view writes through to the array it views. ({@code
     * NDArray.set(Buffer)} would give the view new storage of its own instead.)
     */
    public void writeBack() {
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

    /** Returns whether two of DJL's answers for one array are the same memory, not copies. */
    private static boolean sameMemory(ByteBuffer a, ByteBuffer b) {
        return a.isDirect()
                && b.isDirect()
                && Native.getDirectBufferPointer(a).equals(Native.getDirectBufferPointer(b));
    }

    private static IllegalArgumentException notContiguous(NDArray array, String what) {
        return new IllegalArgumentException(
                what
                        + ": not a contiguous CPU array (expected: memory that can be written in"
                        + " place; shape "
                        + array.getShape()
                        + ", device "
                        + array.getDevice()
                        + ")");
    }
}
