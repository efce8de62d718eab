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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.ReduceOp.Type;
import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Hand-computed results: wrap-around, unsigned bytes, NaN, signed zeros, float16 and bfloat16
 * rounding, booleans.
 */
class ReductionsKnownValuesTest {

    @Test
    void integersWrapAround() {
        assertEquals(0x80, one(Type.SUM, DataType.INT8, 0x7F, 0x01));
        assertEquals(0x00, one(Type.SUM, DataType.UINT8, 0xFF, 0x01));
        assertEquals(0x00, one(Type.PRODUCT, DataType.INT8, 0x10, 0x10));
        assertEquals(0x80000000L, one(Type.SUM, DataType.INT32, 0x7FFFFFFF, 1));
        assertEquals(0x00000001L, one(Type.PRODUCT, DataType.INT32, 0xFFFFFFFFL, 0xFFFFFFFFL));
        assertEquals(Long.MIN_VALUE, one(Type.SUM, DataType.INT64, Long.MAX_VALUE, 1));
        // (2^32 + 1)^2 = 2^64 + 2^33 + 1.
        assertEquals(
                (1L << 33) + 1, one(Type.PRODUCT, DataType.INT64, (1L << 32) + 1, (1L << 32) + 1));
    }

    @Test
    void minAndMaxCompareUint8UnsignedAndInt8Signed() {
        assertEquals(0xC8, one(Type.MAX, DataType.UINT8, 0xC8, 0x64));
        assertEquals(0x7F, one(Type.MIN, DataType.UINT8, 0x80, 0x7F));
        assertEquals(0x64, one(Type.MAX, DataType.INT8, 0xC8, 0x64));
        assertEquals(0x80, one(Type.MIN, DataType.INT8, 0x80, 0x7F));
        assertEquals(0xFFFFFFFFL, one(Type.MIN, DataType.INT32, 0xFFFFFFFFL, 0));
        assertEquals(0L, one(Type.MAX, DataType.INT64, -1L, 0));
    }

    @Test
    void minAndMaxPropagateNaN() {
        for (Type op : new Type[] {Type.MIN, Type.MAX}) {
            assertTrue(Float.isNaN(f32(op, Float.NaN, 1f)));
            assertTrue(Float.isNaN(f32(op, 1f, Float.NaN)));
            assertTrue(Float.isNaN(f32(op, Float.NEGATIVE_INFINITY, Float.NaN)));
            assertTrue(Double.isNaN(f64(op, 2.0, Double.NaN)));
            assertTrue(Double.isNaN(f64(op, Double.NaN, 2.0)));
            assertTrue(HalfReference.isNaN((int) one(op, DataType.FLOAT16, 0x3C00, 0x7C01), false));
            assertTrue(HalfReference.isNaN((int) one(op, DataType.FLOAT16, 0xFE00, 0x3C00), false));
            // bfloat16 NaNs come back canonical, as c10::BFloat16 makes them.
            assertEquals(0x7FC0, one(op, DataType.BFLOAT16, 0xFFC1, 0x3F80));
        }
        assertTrue(Float.isNaN(f32(Type.SUM, Float.POSITIVE_INFINITY, Float.NEGATIVE_INFINITY)));
        assertTrue(Float.isNaN(f32(Type.PRODUCT, 0f, Float.POSITIVE_INFINITY)));
    }

    @Test
    void signedZeros() {
        assertEquals(bits(-0f), bits(f32(Type.MIN, 0f, -0f)));
        assertEquals(bits(-0f), bits(f32(Type.MIN, -0f, 0f)));
        assertEquals(bits(0f), bits(f32(Type.MAX, -0f, 0f)));
        assertEquals(bits(0f), bits(f32(Type.MAX, 0f, -0f)));
        assertEquals(bits(-0f), bits(f32(Type.SUM, -0f, -0f)));
        assertEquals(bits(0f), bits(f32(Type.SUM, 0f, -0f)));
        assertEquals(bits(-0f), bits(f32(Type.PRODUCT, -0f, 5f)));
        assertEquals(
                Double.doubleToRawLongBits(-0.0),
                Double.doubleToRawLongBits(f64(Type.MIN, 0.0, -0.0)));
        assertEquals(0x8000, one(Type.MIN, DataType.FLOAT16, 0x0000, 0x8000));
        assertEquals(0x0000, one(Type.MAX, DataType.BFLOAT16, 0x8000, 0x0000));
        assertEquals(0x8000, one(Type.SUM, DataType.FLOAT16, 0x8000, 0x8000));
    }

    @Test
    void float16RoundsToNearestEven() {
        // 2048 + 1 = 2049 ties between 2048 (even) and 2050.
        assertEquals(0x6800, one(Type.SUM, DataType.FLOAT16, 0x6800, 0x3C00));
        // 2050 + 1 = 2051 ties between 2050 and 2052 (even).
        assertEquals(0x6802, one(Type.SUM, DataType.FLOAT16, 0x6801, 0x3C00));
        // 65504 + 8 = 65512 rounds down; 65504 + 16 = 65520 ties to infinity.
        assertEquals(0x7BFF, one(Type.SUM, DataType.FLOAT16, 0x7BFF, 0x4800));
        assertEquals(0x7C00, one(Type.SUM, DataType.FLOAT16, 0x7BFF, 0x4C00));
        assertEquals(0xFC00, one(Type.SUM, DataType.FLOAT16, 0xFBFF, 0xCC00));
        // Subnormals: 2^-24 + 2^-24, the largest subnormal + 2^-24 = the smallest normal.
        assertEquals(0x0002, one(Type.SUM, DataType.FLOAT16, 0x0001, 0x0001));
        assertEquals(0x0400, one(Type.SUM, DataType.FLOAT16, 0x03FF, 0x0001));
        // 2^-24 * 0.5 ties between 0 (even) and 2^-24; 2^-24 * 1.5 ties up to 2^-23.
        assertEquals(0x0000, one(Type.PRODUCT, DataType.FLOAT16, 0x0001, 0x3800));
        assertEquals(0x0002, one(Type.PRODUCT, DataType.FLOAT16, 0x0001, 0x3E00));
        // 256 * 256 overflows.
        assertEquals(0x7C00, one(Type.PRODUCT, DataType.FLOAT16, 0x5C00, 0x5C00));
        assertEquals(0x3E00, one(Type.SUM, DataType.FLOAT16, 0x3C00, 0x3800));
    }

    @Test
    void bfloat16RoundsToNearestEven() {
        // 1 + 2^-8 ties between 1 (even) and 1 + 2^-7; 1 + 2^-7 + 2^-8 ties up to 1 + 2^-6.
        assertEquals(0x3F80, one(Type.SUM, DataType.BFLOAT16, 0x3F80, 0x3B80));
        assertEquals(0x3F82, one(Type.SUM, DataType.BFLOAT16, 0x3F81, 0x3B80));
        assertEquals(0x7F80, one(Type.SUM, DataType.BFLOAT16, 0x7F7F, 0x7F7F));
        assertEquals(0x4040, one(Type.SUM, DataType.BFLOAT16, 0x3F80, 0x4000));
        // The smallest subnormals: 2^-133 + 2^-133.
        assertEquals(0x0002, one(Type.SUM, DataType.BFLOAT16, 0x0001, 0x0001));
        assertEquals(0x7F80, one(Type.PRODUCT, DataType.BFLOAT16, 0x7F00, 0x4000));
    }

    @Test
    void booleansStayZeroOrOne() {
        assertEquals(1, one(Type.SUM, DataType.BOOLEAN, 1, 1));
        assertEquals(1, one(Type.SUM, DataType.BOOLEAN, 0, 2));
        assertEquals(1, one(Type.MAX, DataType.BOOLEAN, 0x80, 0));
        assertEquals(0, one(Type.PRODUCT, DataType.BOOLEAN, 1, 0));
        assertEquals(1, one(Type.MIN, DataType.BOOLEAN, 2, 0xFF));
        assertEquals(0, one(Type.BXOR, DataType.BOOLEAN, 1, 1));
        assertEquals(0, one(Type.BXOR, DataType.BOOLEAN, 2, 1));
        assertEquals(1, one(Type.BAND, DataType.BOOLEAN, 2, 1));
        assertEquals(1, one(Type.BOR, DataType.BOOLEAN, 0, 4));
        assertEquals(0, one(Type.BOR, DataType.BOOLEAN, 0, 0));
    }

    @Test
    void bitwiseOperationsOnIntegers() {
        assertEquals(0x0F, one(Type.BAND, DataType.UINT8, 0x3F, 0xCF));
        assertEquals(0xFF, one(Type.BOR, DataType.INT8, 0xF0, 0x0F));
        assertEquals(0x12340000L, one(Type.BXOR, DataType.INT32, 0x12345678L, 0x5678));
        assertEquals(-1L, one(Type.BXOR, DataType.INT64, 0x5555555555555555L, 0xAAAAAAAAAAAAAAAAL));
    }

    @Test
    void scalesAndDividesInTheElementsPrecision() {
        ByteBuffer buf = ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN);
        buf.putFloat(0, 1f).putFloat(4, 3f);
        Reductions.divide(DataType.FLOAT32, buf, 0, 2, 3);
        assertEquals(1f / 3, buf.getFloat(0));
        assertEquals(1f, buf.getFloat(4));
        Reductions.scale(DataType.FLOAT32, buf, 4, 1, 0.1);
        assertEquals(0.1f, buf.getFloat(4));
        buf.putShort(0, (short) 0x4200); // float16 3
        Reductions.divide(DataType.FLOAT16, buf, 0, 1, 2);
        assertEquals(0x3E00, buf.getShort(0)); // 1.5
        buf.putShort(0, (short) 0x3F80); // bfloat16 1
        Reductions.scale(DataType.BFLOAT16, buf, 0, 1, 1e-40); // a bfloat16 subnormal
        assertEquals(HalfReference.toBfloat((float) 1e-40), buf.getShort(0));
        buf.putDouble(8, 1.0);
        Reductions.divide(DataType.FLOAT64, buf, 8, 1, 3);
        assertEquals(1.0 / 3, buf.getDouble(8));
    }

    private static long one(Type op, DataType type, long a, long b) {
        int size = type.getNumOfBytes();
        ByteBuffer buf = ByteBuffer.allocate(2 * size);
        TestBuffers.put(buf, 0, 0, size, a);
        TestBuffers.put(buf, size, 0, size, b);
        Reductions.reduce(op, type, buf, 0, buf, size, 1);
        return TestBuffers.get(TestBuffers.bytes(buf), 0, 0, size);
    }

    private static float f32(Type op, float a, float b) {
        return Float.intBitsToFloat((int) one(op, DataType.FLOAT32, bits(a), bits(b)));
    }

    private static double f64(Type op, double a, double b) {
        return Double.longBitsToDouble(
                one(
                        op,
                        DataType.FLOAT64,
                        Double.doubleToRawLongBits(a),
                        Double.doubleToRawLongBits(b)));
    }

    private static long bits(float f) {
        return Float.floatToRawIntBits(f) & 0xFFFFFFFFL;
    }
}
