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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.NotSupportedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.api.Test;

import java.util.List;

class NcclOpsTest {

    @Test
    void typesMapAsPyTorchMapsThem() {
        assertEquals(NcclDataType.UINT8, NcclOps.dataType(DataType.BOOLEAN));
        assertEquals(NcclDataType.UINT8, NcclOps.dataType(DataType.UINT8));
        assertEquals(NcclDataType.INT8, NcclOps.dataType(DataType.INT8));
        assertEquals(NcclDataType.INT32, NcclOps.dataType(DataType.INT32));
        assertEquals(NcclDataType.INT64, NcclOps.dataType(DataType.INT64));
        assertEquals(NcclDataType.FLOAT16, NcclOps.dataType(DataType.FLOAT16));
        assertEquals(NcclDataType.BFLOAT16, NcclOps.dataType(DataType.BFLOAT16));
        assertEquals(NcclDataType.FLOAT32, NcclOps.dataType(DataType.FLOAT32));
        assertEquals(NcclDataType.FLOAT64, NcclOps.dataType(DataType.FLOAT64));
        for (DataType t : List.of(DataType.INT16, DataType.UINT16, DataType.COMPLEX64)) {
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> NcclOps.dataType(t));
            assertTrue(e.getMessage().contains(t.toString()), e.getMessage());
            assertTrue(e.getMessage().contains("nccl"), e.getMessage());
        }
    }

    @Test
    void reductionsOnNumbersKeepTheirOp() {
        assertEquals(NcclRedOp.SUM, NcclOps.reduction(ReduceOp.SUM, DataType.FLOAT32).op());
        assertEquals(NcclRedOp.PROD, NcclOps.reduction(ReduceOp.PRODUCT, DataType.INT64).op());
        assertEquals(NcclRedOp.MIN, NcclOps.reduction(ReduceOp.MIN, DataType.FLOAT16).op());
        assertEquals(NcclRedOp.MAX, NcclOps.reduction(ReduceOp.MAX, DataType.INT8).op());
        assertEquals(NcclRedOp.AVG, NcclOps.reduction(ReduceOp.AVG, DataType.BFLOAT16).op());
        assertNull(NcclOps.reduction(ReduceOp.SUM, DataType.FLOAT32).scalar());
    }

    @Test
    void booleansSumAsMaxOnBytesAndRefuseAvg() {
        NcclOps.Reduction sum = NcclOps.reduction(ReduceOp.SUM, DataType.BOOLEAN);
        assertEquals(NcclRedOp.MAX, sum.op());
        assertEquals(NcclDataType.UINT8, sum.type());
        assertEquals(NcclRedOp.MAX, NcclOps.reduction(ReduceOp.MAX, DataType.BOOLEAN).op());
        assertEquals(NcclRedOp.MIN, NcclOps.reduction(ReduceOp.MIN, DataType.BOOLEAN).op());
        IllegalArgumentException avg =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> NcclOps.reduction(ReduceOp.AVG, DataType.BOOLEAN));
        assertTrue(avg.getMessage().contains("AVG"), avg.getMessage());
        assertTrue(avg.getMessage().contains("boolean"), avg.getMessage());
        assertThrows(
                IllegalArgumentException.class,
                () -> NcclOps.reduction(ReduceOp.premulSum(2), DataType.BOOLEAN));
    }

    @Test
    void bitwiseOpsAreRefusedNamingTheBackend() {
        for (ReduceOp op : List.of(ReduceOp.BAND, ReduceOp.BOR, ReduceOp.BXOR)) {
            NotSupportedException e =
                    assertThrows(
                            NotSupportedException.class,
                            () -> NcclOps.reduction(op, DataType.INT32));
            assertTrue(e.getMessage().startsWith("nccl does not support"), e.getMessage());
            assertTrue(e.getMessage().contains(op.toString()), e.getMessage());
        }
    }

    @Test
    void halfPrecisionBitsOfKnownValues() {
        // IEEE binary16: 0.5 = 0x3800, 1 = 0x3C00, -2 = 0xC000, 65504 (max) = 0x7BFF,
        // 0.1 = 0x2E66, 1/3 = 0x3555, 2^-24 (smallest subnormal) = 0x0001, 2^-14 = 0x0400.
        assertEquals((short) 0x3800, NcclOps.float16Bits(0.5f));
        assertEquals((short) 0x3C00, NcclOps.float16Bits(1f));
        assertEquals((short) 0xC000, NcclOps.float16Bits(-2f));
        assertEquals((short) 0x7BFF, NcclOps.float16Bits(65504f));
        assertEquals((short) 0x7C00, NcclOps.float16Bits(65520f)); // rounds up past the max
        assertEquals((short) 0x7C00, NcclOps.float16Bits(Float.POSITIVE_INFINITY));
        assertEquals((short) 0x2E66, NcclOps.float16Bits(0.1f));
        assertEquals((short) 0x3555, NcclOps.float16Bits(1f / 3));
        assertEquals((short) 0x0001, NcclOps.float16Bits((float) Math.pow(2, -24)));
        assertEquals((short) 0x0400, NcclOps.float16Bits((float) Math.pow(2, -14)));
        assertEquals((short) 0x0000, NcclOps.float16Bits((float) Math.pow(2, -26)));
        assertEquals((short) 0x8000, NcclOps.float16Bits(-0f));
        // Ties go to even: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10.
        assertEquals((short) 0x3C00, NcclOps.float16Bits(1f + (float) Math.pow(2, -11)));
        assertEquals((short) 0x3C02, NcclOps.float16Bits(1f + 3 * (float) Math.pow(2, -11)));
    }

    @Test
    void bfloat16BitsOfKnownValues() {
        // bfloat16 is the top half of a float, rounded: 0.5 = 0x3F00, 1 = 0x3F80, -2 = 0xC000,
        // 0.1 (0x3DCCCCCD) = 0x3DCD, 1/3 (0x3EAAAAAB) = 0x3EAB.
        assertEquals((short) 0x3F00, NcclOps.bfloat16Bits(0.5f));
        assertEquals((short) 0x3F80, NcclOps.bfloat16Bits(1f));
        assertEquals((short) 0xC000, NcclOps.bfloat16Bits(-2f));
        assertEquals((short) 0x3DCD, NcclOps.bfloat16Bits(0.1f));
        assertEquals((short) 0x3EAB, NcclOps.bfloat16Bits(1f / 3));
        assertEquals((short) 0x3F80, NcclOps.bfloat16Bits(Float.intBitsToFloat(0x3F808000)));
        assertEquals((short) 0x3F82, NcclOps.bfloat16Bits(Float.intBitsToFloat(0x3F818000)));
        assertTrue(Float.isNaN(Float.intBitsToFloat(NcclOps.bfloat16Bits(Float.NaN) << 16)));
    }

    @Test
    void thePremulScalarHasTheTypesWidth() {
        NcclOps.Reduction half = NcclOps.reduction(ReduceOp.premulSum(0.5), DataType.FLOAT16);
        assertNull(half.op());
        assertArrayEquals(new byte[] {0x00, 0x38}, half.scalar());
        assertArrayEquals(
                new byte[] {0x00, 0x3F},
                NcclOps.reduction(ReduceOp.premulSum(0.5), DataType.BFLOAT16).scalar());
        // 0.5f = 0x3F000000; 0.5 as a double = 0x3FE0000000000000; little-endian.
        assertArrayEquals(
                new byte[] {0, 0, 0, 0x3F},
                NcclOps.reduction(ReduceOp.premulSum(0.5), DataType.FLOAT32).scalar());
        assertArrayEquals(
                new byte[] {0, 0, 0, 0, 0, 0, (byte) 0xE0, 0x3F},
                NcclOps.reduction(ReduceOp.premulSum(0.5), DataType.FLOAT64).scalar());
        assertArrayEquals(
                new byte[] {3, 0, 0, 0},
                NcclOps.reduction(ReduceOp.premulSum(3.9), DataType.INT32).scalar());
        assertArrayEquals(
                new byte[] {-2, -1, -1, -1, -1, -1, -1, -1},
                NcclOps.reduction(ReduceOp.premulSum(-2), DataType.INT64).scalar());
        assertArrayEquals(
                new byte[] {5}, NcclOps.reduction(ReduceOp.premulSum(5), DataType.INT8).scalar());
        for (NcclDataType t : NcclDataType.values()) {
            assertEquals(t.width(), NcclOps.scalarBytes(1, t).length, t.toString());
        }
    }
}
