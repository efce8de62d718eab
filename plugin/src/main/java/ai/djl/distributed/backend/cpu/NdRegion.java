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
        // For an array that is not contiguous, DJL's toByteBuffer(true) makes a contiguous copy and
        // attaches it to the array's manager, where it would stay until that manager closes: the
        // array joins a scope of ours for the call, so that such copies are freed here.
        try (NDManager scope = array.getManager().newSubManager()) {
            array.tempAttach(scope);
            ByteBuffer b = array.toByteBuffer(true);
            if (b.isDirect()) {
                // A copy is fresh memory on every call; the array's own memory is the same twice.
                ByteBuffer again = array.toByteBuffer(true);
                if (Native.getDirectBufferPointer(b).equals(Native.getDirectBufferPointer(again))) {
                    return new NdRegion(array, b.order(ByteOrder.LITTLE_ENDIAN).clear(), true);
                }
            }
            ByteBuffer copy =
                    ByteBuffer.allocateDirect(b.remaining()).order(ByteOrder.LITTLE_ENDIAN);
            copy.put(b).flip();
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
        try (NDManager scope = array.getManager().newSubManager()) {
            NDArray result = scope.create(buffer.clear(), array.getShape(), array.getDataType());
            array.set(new NDIndex("..."), result);
        }
    }
}
