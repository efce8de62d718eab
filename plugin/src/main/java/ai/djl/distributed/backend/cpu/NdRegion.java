package ai.djl.distributed.backend.cpu;

import ai.djl.ndarray.NDArray;

import com.sun.jna.Native;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The bytes of a CPU NDArray as a little-endian {@link ByteBuffer}. For a contiguous PyTorch array
 * the buffer is the array's own memory ({@code toByteBuffer(true)}), so collectives read and write
 * it in place; otherwise it is a copy, which {@link #writeBack()} copies into the array.
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
     * @param output whether the operation writes the array (then sharing is checked, so that a copy
     *     is written back)
     * @return the region
     */
    static NdRegion of(NDArray array, boolean output) {
        if (array.size() == 0) {
            return new NdRegion(array, ByteBuffer.allocate(0), true);
        }
        ByteBuffer b = array.toByteBuffer(true).order(ByteOrder.LITTLE_ENDIAN);
        boolean shared = b.isDirect();
        if (shared && output) {
            // A non-contiguous array yields a fresh copy on every call: same address, same memory.
            ByteBuffer again = array.toByteBuffer(true);
            shared = Native.getDirectBufferPointer(b).equals(Native.getDirectBufferPointer(again));
        }
        if (!b.isDirect()) {
            ByteBuffer direct =
                    ByteBuffer.allocateDirect(b.remaining()).order(ByteOrder.LITTLE_ENDIAN);
            b = direct.put(b).flip();
        }
        return new NdRegion(array, b.clear(), shared);
    }

    ByteBuffer buffer() {
        return buffer;
    }

    /** Copies the buffer into the array when it is not the array's own memory. */
    void writeBack() {
        if (!shared) {
            array.set(buffer.clear());
        }
    }
}
