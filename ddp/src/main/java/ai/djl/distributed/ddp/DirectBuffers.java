package ai.djl.distributed.ddp;

import ai.djl.ndarray.NDArray;

import com.sun.jna.Native;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The memory of CPU NDArrays as {@link ByteBuffer}s. DJL's PyTorch engine hands out a contiguous
 * tensor's own memory from {@code toByteBuffer(true)} (a copy otherwise), so gradients are read and
 * flat buckets and parameters written without going through NDArray operations, which would build
 * autograd history or refuse in-place writes to leaves that require gradients.
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
     * Returns the array's bytes for reading: its memory when contiguous, else a copy.
     *
     * @param array a CPU array
     * @return a little-endian buffer of its bytes
     */
    static ByteBuffer read(NDArray array) {
        return array.toByteBuffer(true).order(ByteOrder.LITTLE_ENDIAN);
    }

    /**
     * Copies an array's bytes over another's, in place.
     *
     * @param from the source; same type and element count as {@code to}
     * @param to the destination, contiguous
     * @param what names the destination in errors
     */
    static void copy(NDArray from, NDArray to, String what) {
        if (from.getDataType() != to.getDataType() || from.size() != to.size()) {
            throw new IllegalArgumentException(
                    what
                            + ": "
                            + from.getDataType()
                            + " "
                            + from.getShape()
                            + " (expected: "
                            + to.getDataType()
                            + " "
                            + to.getShape()
                            + ")");
        }
        if (to.size() == 0) {
            return;
        }
        view(to, what)
                .put(
                        0,
                        read(from),
                        0,
                        Math.toIntExact(to.size() * to.getDataType().getNumOfBytes()));
    }
}
