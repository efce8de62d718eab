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
package ai.djl.distributed.backend.cpu.reduce;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.nio.FloatBuffer;
import java.nio.IntBuffer;
import java.nio.LongBuffer;
import java.nio.ShortBuffer;

/**
 * Per-thread block arrays into which the kernels copy their operands, and the little-endian views
 * through which they copy.
 *
 * <p>Each thread that reduces keeps about 28 KiB of arrays for its lifetime.
 */
final class Scratch {

    /**
     * Bytes of each operand copied per block. Copies of 4 KiB and more went through a slower
     * HotSpot copy stub on the machine measured (JDK 17, AMD EPYC): a 4 KiB block made float32 SUM
     * on 32 MiB twice as slow as a 2 KiB one; 2 KiB of both operands also stays in L1.
     */
    static final int BLOCK_BYTES = 2048;

    private static final ThreadLocal<Scratch> LOCAL = ThreadLocal.withInitial(Scratch::new);

    final byte[] bytesA = new byte[BLOCK_BYTES];
    final byte[] bytesB = new byte[BLOCK_BYTES];
    final short[] shortsA = new short[BLOCK_BYTES / Short.BYTES];
    final short[] shortsB = new short[BLOCK_BYTES / Short.BYTES];
    final int[] intsA = new int[BLOCK_BYTES / Integer.BYTES];
    final int[] intsB = new int[BLOCK_BYTES / Integer.BYTES];
    final long[] longsA = new long[BLOCK_BYTES / Long.BYTES];
    final long[] longsB = new long[BLOCK_BYTES / Long.BYTES];
    final double[] doublesA = new double[BLOCK_BYTES / Double.BYTES];
    final double[] doublesB = new double[BLOCK_BYTES / Double.BYTES];
    // Sized for a block of 16-bit floats widened to float32.
    final float[] floatsA = new float[BLOCK_BYTES / Short.BYTES];
    final float[] floatsB = new float[BLOCK_BYTES / Short.BYTES];

    private Scratch() {}

    /**
     * Returns the calling thread's arrays.
     *
     * @return the arrays
     */
    static Scratch get() {
        return LOCAL.get();
    }

    /**
     * Returns a little-endian view of {@code count} elements from byte {@code offset}.
     *
     * @param buf the buffer
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @return the view
     */
    static ShortBuffer shorts(ByteBuffer buf, int offset, int count) {
        return view(buf, offset, count * Short.BYTES).asShortBuffer();
    }

    /**
     * Returns a little-endian view of {@code count} elements from byte {@code offset}.
     *
     * @param buf the buffer
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @return the view
     */
    static IntBuffer ints(ByteBuffer buf, int offset, int count) {
        return view(buf, offset, count * Integer.BYTES).asIntBuffer();
    }

    /**
     * Returns a little-endian view of {@code count} elements from byte {@code offset}.
     *
     * @param buf the buffer
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @return the view
     */
    static LongBuffer longs(ByteBuffer buf, int offset, int count) {
        return view(buf, offset, count * Long.BYTES).asLongBuffer();
    }

    /**
     * Returns a little-endian view of {@code count} elements from byte {@code offset}.
     *
     * @param buf the buffer
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @return the view
     */
    static FloatBuffer floats(ByteBuffer buf, int offset, int count) {
        return view(buf, offset, count * Float.BYTES).asFloatBuffer();
    }

    /**
     * Returns a little-endian view of {@code count} elements from byte {@code offset}.
     *
     * @param buf the buffer
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @return the view
     */
    static DoubleBuffer doubles(ByteBuffer buf, int offset, int count) {
        return view(buf, offset, count * Double.BYTES).asDoubleBuffer();
    }

    // A slice ignores the buffer's position and order, and leaves both untouched.
    private static ByteBuffer view(ByteBuffer buf, int offset, int length) {
        return buf.slice(offset, length).order(ByteOrder.LITTLE_ENDIAN);
    }
}
