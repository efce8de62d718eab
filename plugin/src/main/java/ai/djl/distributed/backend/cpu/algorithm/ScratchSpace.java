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
