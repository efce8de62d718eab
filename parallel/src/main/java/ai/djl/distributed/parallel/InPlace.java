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
package ai.djl.distributed.parallel;

import ai.djl.distributed.memory.NdRegion;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

/**
 * Writes an array's values over another's in place, on any device: what synchronizing, loading a
 * checkpoint or gathering a shard into a parameter needs. Between two CPU arrays it is a memory
 * copy; otherwise (a GPU on either side) NDArray operations on a view of the target that records no
 * autograd history, so a parameter that requires gradients can be written as well.
 *
 * <p>Stateless and thread-safe; the calls do not block beyond the copy itself (which, on a GPU, is
 * queued on the device's stream).
 */
public final class InPlace {

    private InPlace() {}

    /**
     * Copies {@code from}'s values over {@code to}'s, in place. Neither array is closed; both stay
     * owned by their managers.
     *
     * @param from the source: the same data type and element count as {@code to}, any shape and
     *     device
     * @param to the destination; on the CPU it must be contiguous
     * @param what names the destination in errors
     * @throws IllegalArgumentException if the types or element counts differ, or a CPU destination
     *     is not contiguous
     */
    public static void copy(NDArray from, NDArray to, String what) {
        copy(from, to, what, NdRegion.onCpu(from) && NdRegion.onCpu(to));
    }

    /**
     * Copies as {@link #copy(NDArray, NDArray, String)}, by memory copy or by NDArray operations as
     * told (the latter also on the CPU: what tests use to check the GPU path).
     */
    static void copy(NDArray from, NDArray to, String what, boolean memoryCopy) {
        checkSameElements(from, to, what);
        if (to.size() == 0) {
            return;
        }
        if (memoryCopy) {
            NdRegion.view(to, what)
                    .put(
                            0,
                            NdRegion.read(from),
                            0,
                            Math.toIntExact(to.size() * to.getDataType().getNumOfBytes()));
            return;
        }
        // detach() shares the target's memory: the write lands in it, and no autograd history is
        // recorded (PyTorch refuses in-place writes to a leaf that requires gradients). The
        // indexer moves the source to the target's device itself.
        if (to.getShape().dimension() == 0) {
            // PyTorch refuses an empty index list: a scalar is written through a 1-element view.
            try (NDArray target = to.stopGradient();
                    NDArray one = target.reshape(1)) {
                copy(from, one, what, false);
            }
            return;
        }
        Shape shape = to.getShape();
        NDIndex all = new NDIndex();
        for (int d = 0; d < shape.dimension(); d++) {
            all.addSliceDim(0, shape.get(d));
        }
        try (NDArray target = to.stopGradient();
                NDArray detached = from.stopGradient();
                NDArray source = detached.reshape(shape)) {
            target.set(all, source);
        }
    }

    /**
     * Checks that two arrays hold the same number of elements of the same type.
     *
     * @throws IllegalArgumentException naming {@code what}, both types and both shapes otherwise
     */
    static void checkSameElements(NDArray from, NDArray to, String what) {
        checkElements(from, to.getDataType(), to.getShape(), what);
    }

    /**
     * Checks that an array holds as many elements of a type as a shape has.
     *
     * @throws IllegalArgumentException naming {@code what}, both types and both shapes otherwise
     */
    static void checkElements(NDArray array, DataType type, Shape shape, String what) {
        if (array.getDataType() != type || array.size() != shape.size()) {
            throw new IllegalArgumentException(
                    what
                            + ": "
                            + array.getDataType()
                            + " "
                            + array.getShape()
                            + " (expected: "
                            + type
                            + " "
                            + shape
                            + ")");
        }
    }
}
