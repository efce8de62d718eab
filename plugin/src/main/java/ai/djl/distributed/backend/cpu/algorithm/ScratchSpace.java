package ai.djl.distributed.backend.cpu.algorithm;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Direct buffers a backend keeps for its collectives' intermediate data, grown to the largest size
 * asked for and reused. Not thread-safe: a backend runs one collective at a time.
 */
public final class ScratchSpace {

    private final ByteBuffer[] buffers = new ByteBuffer[2];

    /**
     * Returns scratch buffer {@code slot} with at least {@code bytes} bytes.
     *
     * @param slot 0 or 1
     * @param bytes the size needed
     * @return the buffer, little-endian, position 0, limit {@code bytes}
     */
    public ByteBuffer get(int slot, int bytes) {
        ByteBuffer b = buffers[slot];
        if (b == null || b.capacity() < bytes) {
            b = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
            buffers[slot] = b;
        }
        return b.clear().limit(bytes);
    }

    /** Drops the buffers (the garbage collector frees direct memory). */
    public void release() {
        buffers[0] = null;
        buffers[1] = null;
    }
}
