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

import ai.djl.ndarray.types.DataType;

import java.nio.ByteBuffer;
import java.util.Random;

/** Random elements of each type, and little-endian element access by hand, for the tests. */
final class TestBuffers {

    private TestBuffers() {}

    /**
     * Returns a buffer of {@code capacity} random bytes, direct or heap, in big-endian order (so
     * that code relying on the buffer's order would fail).
     *
     * @param direct whether direct
     * @param capacity the capacity
     * @param random the source of bytes
     * @return the buffer
     */
    static ByteBuffer allocate(boolean direct, int capacity, Random random) {
        ByteBuffer buf =
                direct ? ByteBuffer.allocateDirect(capacity) : ByteBuffer.allocate(capacity);
        byte[] bytes = new byte[capacity];
        random.nextBytes(bytes);
        buf.put(0, bytes);
        return buf;
    }

    /**
     * Returns a copy of a buffer's bytes, from 0 to its capacity.
     *
     * @param buf the buffer
     * @return its bytes
     */
    static byte[] bytes(ByteBuffer buf) {
        ByteBuffer all = buf.duplicate().clear();
        byte[] bytes = new byte[buf.capacity()];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = all.get(i);
        }
        return bytes;
    }

    /**
     * Reads the little-endian element {@code index} of {@code size} bytes at {@code offset}.
     *
     * @param bytes the bytes
     * @param offset the first element's offset
     * @param index the element
     * @param size the element's size
     * @return its bits, zero-extended
     */
    static long get(byte[] bytes, int offset, int index, int size) {
        long bits = 0;
        for (int i = size - 1; i >= 0; i--) {
            bits = bits << 8 | (bytes[offset + index * size + i] & 0xFF);
        }
        return bits;
    }

    /**
     * Writes the little-endian element {@code index} of {@code size} bytes at {@code offset}.
     *
     * @param buf the buffer
     * @param offset the first element's offset
     * @param index the element
     * @param size the element's size
     * @param bits its bits
     */
    static void put(ByteBuffer buf, int offset, int index, int size, long bits) {
        for (int i = 0; i < size; i++) {
            buf.put(offset + index * size + i, (byte) (bits >>> (8 * i)));
        }
    }

    /**
     * Returns a random element: often ordinary values (so sums and products mean something), with
     * raw bit patterns (NaN, infinities, subnormals, extremes) and special values mixed in.
     *
     * @param type the type
     * @param random the source
     * @return the element's bits
     */
    static long element(DataType type, Random random) {
        int pick = random.nextInt(10);
        switch (type) {
            case FLOAT32:
                if (pick == 0) {
                    return Float.floatToRawIntBits(specialFloat(random)) & 0xFFFFFFFFL;
                }
                return pick == 1
                        ? random.nextInt() & 0xFFFFFFFFL
                        : ordinaryFloat(random) & 0xFFFFFFFFL;
            case FLOAT64:
                if (pick == 0) {
                    return Double.doubleToRawLongBits(specialDouble(random));
                }
                return pick == 1
                        ? random.nextLong()
                        : Double.doubleToRawLongBits(
                                random.nextGaussian() * Math.pow(2, random.nextInt(80) - 40));
            case FLOAT16:
                if (pick < 2) {
                    return random.nextInt(1 << 16);
                }
                return HalfReference.toHalf(
                        (float) (random.nextGaussian() * Math.pow(2, random.nextInt(20) - 10)));
            case BFLOAT16:
                if (pick < 2) {
                    return random.nextInt(1 << 16);
                }
                return HalfReference.toBfloat(
                        (float) (random.nextGaussian() * Math.pow(2, random.nextInt(40) - 20)));
            case BOOLEAN:
                // Mostly 0 and 1; other non-zero bytes are true as well.
                return pick == 0 ? random.nextInt(256) : random.nextInt(2);
            default:
                int bits = type.getNumOfBytes() * 8;
                long mask = bits == 64 ? -1L : (1L << bits) - 1;
                long[] extremes = {0, 1, -1, 1L << (bits - 1), (1L << (bits - 1)) - 1};
                return (pick == 0 ? extremes[random.nextInt(extremes.length)] : random.nextLong())
                        & mask;
        }
    }

    private static int ordinaryFloat(Random random) {
        return Float.floatToRawIntBits(
                (float) (random.nextGaussian() * Math.pow(2, random.nextInt(40) - 20)));
    }

    private static double specialDouble(Random random) {
        double[] specials = {
            Double.MAX_VALUE, -Double.MAX_VALUE, Double.MIN_VALUE, Double.MIN_NORMAL, -0.0, 0.0
        };
        int pick = random.nextInt(specials.length + 4);
        return pick < specials.length ? specials[pick] : specialFloat(random);
    }

    private static float specialFloat(Random random) {
        float[] specials = {
            Float.NaN,
            Float.POSITIVE_INFINITY,
            Float.NEGATIVE_INFINITY,
            0f,
            -0f,
            Float.MIN_VALUE,
            -Float.MIN_VALUE,
            Float.MIN_NORMAL,
            Float.MAX_VALUE,
            -Float.MAX_VALUE,
            1f,
            -1f
        };
        return specials[random.nextInt(specials.length)];
    }
}
