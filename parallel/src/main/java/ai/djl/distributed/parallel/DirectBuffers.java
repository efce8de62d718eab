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

import ai.djl.Device;
import ai.djl.ndarray.NDArray;

import com.sun.jna.Native;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The memory of CPU NDArrays as {@link ByteBuffer}s: the memory-copy path of {@link FlatBuffer} and
 * {@link InPlace}. DJL's PyTorch engine hands out a contiguous tensor's own memory from {@code
 * toByteBuffer(true)} (a copy otherwise), so CPU arrays are read and written at memory-copy speed,
 * with no NDArray operation (no autograd history, no refused in-place write to a leaf that requires
 * gradients, no native call per element range).
 */
final class DirectBuffers {

    private DirectBuffers() {}

    /**
     * Returns the array's own memory, for writing.
     *
     * @param array a contiguous CPU array
     * @param what names the array in the error
     * @return a little-endian view of its bytes
     * @throws IllegalArgumentException if DJL would only give a copy
     */
    static ByteBuffer view(NDArray array, String what) {
        ByteBuffer b = array.toByteBuffer(true);
        // A non-contiguous array yields a fresh copy on every call: compare two calls' addresses.
        if (!b.isDirect()
                || b.capacity() > 0
                        && !Native.getDirectBufferPointer(b)
                                .equals(Native.getDirectBufferPointer(array.toByteBuffer(true)))) {
            throw new IllegalArgumentException(
                    what
                            + ": not a contiguous CPU array (expected: memory that can be written in"
                            + " place; shape "
                            + array.getShape()
                            + ", device "
                            + array.getDevice()
                            + ")");
        }
        return b.order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Returns whether an array lives in host memory, where the memory-copy path applies.
     *
     * @param array an array
     * @return whether its device is a CPU
     */
    static boolean onCpu(NDArray array) {
        return Device.Type.CPU.equals(array.getDevice().getDeviceType());
    }

    /**
     * Returns the array's bytes for reading: its memory when contiguous, else a copy.
     *
     * @param array a CPU array
     * @return a little-endian buffer of its bytes
     */
    static ByteBuffer read(NDArray array) {
        return array.toByteBuffer(true).order(ByteOrder.LITTLE_ENDIAN);
    }
}
