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

import ai.djl.ndarray.types.DataType;

import java.util.Arrays;

/**
 * What libtorch's shim says of one tensor: where its first element is, on which device, its type
 * and its layout. A snapshot, valid while the array it was read from stays open and is not resized;
 * the pointer is the array's memory (no copy). Immutable.
 *
 * @param address the first element's address (the storage offset included)
 * @param deviceType {@code "cpu"} or {@code "gpu"} (DJL's names), or {@code "torch:N"} (N:
 *     PyTorch's code) for another device
 * @param deviceIndex the device's index ({@code -1} for the CPU)
 * @param dataType the element type, or null for one DJL does not name
 * @param torchDtype PyTorch's code of the element type
 * @param numel the number of elements
 * @param storageOffset the first element's offset in its storage, in elements
 * @param shape the sizes
 * @param strides the strides, in elements
 */
public record TensorView(
        long address,
        String deviceType,
        int deviceIndex,
        DataType dataType,
        int torchDtype,
        long numel,
        long storageOffset,
        long[] shape,
        long[] strides) {

    /**
     * Copies the shape and strides.
     *
     * @param address the first element's address
     * @param deviceType the device type
     * @param deviceIndex the device index
     * @param dataType the element type, or null
     * @param torchDtype PyTorch's code of the type
     * @param numel the number of elements
     * @param storageOffset the storage offset, in elements
     * @param shape the sizes
     * @param strides the strides
     */
    public TensorView {
        shape = shape.clone();
        strides = strides.clone();
    }

    /**
     * Returns the sizes.
     *
     * @return a copy
     */
    @Override
    public long[] shape() {
        return shape.clone();
    }

    /**
     * Returns the strides.
     *
     * @return a copy
     */
    @Override
    public long[] strides() {
        return strides.clone();
    }

    /**
     * Returns whether the elements are dense in row-major order, as {@code Tensor.is_contiguous()}:
     * sizes of 1 are ignored, and an empty tensor is contiguous.
     *
     * @return whether the tensor is contiguous
     */
    public boolean isContiguous() {
        return isContiguous(shape, strides);
    }

    /**
     * Returns whether sizes and strides describe a row-major dense layout.
     *
     * @param shape the sizes
     * @param strides the strides, in elements
     * @return whether it is contiguous
     */
    static boolean isContiguous(long[] shape, long[] strides) {
        for (long size : shape) {
            if (size == 0) {
                return true;
            }
        }
        long expected = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            if (shape[d] != 1) {
                if (strides[d] != expected) {
                    return false;
                }
                expected *= shape[d];
            }
        }
        return true;
    }

    /** Names the tensor for messages: shape, type, device, strides and address. */
    @Override
    public String toString() {
        return "tensor "
                + Arrays.toString(shape)
                + " "
                + (dataType == null ? "torch dtype " + torchDtype : dataType)
                + " on "
                + deviceType
                + (deviceIndex >= 0 ? "(" + deviceIndex + ")" : "")
                + " strides "
                + Arrays.toString(strides)
                + " at 0x"
                + Long.toHexString(address);
    }

    /** {@inheritDoc} */
    @Override
    public boolean equals(Object o) {
        return o instanceof TensorView v
                && address == v.address
                && deviceType.equals(v.deviceType)
                && deviceIndex == v.deviceIndex
                && torchDtype == v.torchDtype
                && numel == v.numel
                && storageOffset == v.storageOffset
                && Arrays.equals(shape, v.shape)
                && Arrays.equals(strides, v.strides);
    }

    /** {@inheritDoc} */
    @Override
    public int hashCode() {
        return Long.hashCode(address) * 31 + Arrays.hashCode(shape);
    }
}
