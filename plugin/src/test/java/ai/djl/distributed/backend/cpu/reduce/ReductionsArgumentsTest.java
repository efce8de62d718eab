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
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;

/** {@link Reductions#checkSupported} and the argument checks, with their messages. */
class ReductionsArgumentsTest {

    private static final ReduceOp[] OPS = {
        ReduceOp.SUM,
        ReduceOp.PRODUCT,
        ReduceOp.MIN,
        ReduceOp.MAX,
        ReduceOp.BAND,
        ReduceOp.BOR,
        ReduceOp.BXOR,
        ReduceOp.AVG,
        ReduceOp.premulSum(0.5)
    };

    @Test
    void acceptsEveryOperationThatApplies() {
        for (DataType type : ReductionsTest.TYPES) {
            for (ReduceOp op : OPS) {
                boolean averaging =
                        op.getType() == ReduceOp.Type.AVG
                                || op.getType() == ReduceOp.Type.PREMUL_SUM;
                if (type.isFloating() ? !op.isBitwise() : !averaging) {
                    Reductions.checkSupported(op, type);
                } else {
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> Reductions.checkSupported(op, type),
                            op + " " + type);
                }
            }
        }
    }

    @Test
    void namesTheOperationAndType() {
        assertMessage(
                "op: BAND (expected: SUM, PRODUCT, MIN, MAX, AVG or PREMUL_SUM for FLOAT32)",
                () -> Reductions.checkSupported(ReduceOp.BAND, DataType.FLOAT32));
        assertMessage(
                "op: BXOR (expected: SUM, PRODUCT, MIN, MAX, AVG or PREMUL_SUM for BFLOAT16)",
                () -> Reductions.checkSupported(ReduceOp.BXOR, DataType.BFLOAT16));
        assertMessage(
                "op: AVG (expected: SUM, PRODUCT, MIN, MAX, BAND, BOR or BXOR for INT32)",
                () -> Reductions.checkSupported(ReduceOp.AVG, DataType.INT32));
        assertMessage(
                "op: PREMUL_SUM(0.5) (expected: SUM, PRODUCT, MIN, MAX, BAND, BOR or BXOR for"
                        + " BOOLEAN)",
                () -> Reductions.checkSupported(ReduceOp.premulSum(0.5), DataType.BOOLEAN));
        assertMessage(
                "op: BOR (expected: SUM, PRODUCT, MIN, MAX, AVG or PREMUL_SUM for FLOAT64)",
                () ->
                        Reductions.reduce(
                                ReduceOp.Type.BOR,
                                DataType.FLOAT64,
                                ByteBuffer.allocate(8),
                                0,
                                ByteBuffer.allocate(8),
                                0,
                                1));
    }

    @Test
    void rejectsUnsupportedTypes() {
        String expected =
                " (expected: FLOAT32, FLOAT64, FLOAT16, BFLOAT16, INT8, UINT8, INT32, INT64 or"
                        + " BOOLEAN)";
        for (DataType type :
                new DataType[] {
                    DataType.STRING,
                    DataType.UNKNOWN,
                    DataType.COMPLEX64,
                    DataType.INT16,
                    DataType.UINT16,
                    DataType.UINT32,
                    DataType.UINT64
                }) {
            assertMessage(
                    "type: " + type.name() + expected,
                    () -> Reductions.checkSupported(ReduceOp.SUM, type));
        }
        assertMessage(
                "type: INT32 (expected: FLOAT32, FLOAT64, FLOAT16 or BFLOAT16 to scale)",
                () -> Reductions.scale(DataType.INT32, ByteBuffer.allocate(4), 0, 1, 2));
        assertMessage(
                "type: BOOLEAN (expected: FLOAT32, FLOAT64, FLOAT16 or BFLOAT16 to divide)",
                () -> Reductions.divide(DataType.BOOLEAN, ByteBuffer.allocate(4), 0, 1, 2));
    }

    @Test
    void reduceTakesNoAveragingOperation() {
        ByteBuffer buf = ByteBuffer.allocate(8);
        assertMessage(
                "op: AVG (expected: SUM, PRODUCT, MIN, MAX, BAND, BOR or BXOR; reduce AVG as SUM,"
                        + " then divide or scale)",
                () -> Reductions.reduce(ReduceOp.Type.AVG, DataType.FLOAT32, buf, 0, buf, 4, 1));
        assertThrows(
                IllegalArgumentException.class,
                () ->
                        Reductions.reduce(
                                ReduceOp.Type.PREMUL_SUM, DataType.FLOAT32, buf, 0, buf, 4, 1));
    }

    @Test
    void checksRanges() {
        ByteBuffer dst = ByteBuffer.allocate(16);
        ByteBuffer src = ByteBuffer.allocate(16);
        assertMessage(
                "count: -1 (expected: >= 0)",
                () -> Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, dst, 0, src, 0, -1));
        assertMessage(
                "dstOffset: -4 (expected: >= 0, with 1 elements of 4 bytes ending at 0 <= limit"
                        + " 16)",
                () -> Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, dst, -4, src, 0, 1));
        assertMessage(
                "srcOffset: 4 (expected: >= 0, with 4 elements of 4 bytes ending at 20 <= limit"
                        + " 16)",
                () -> Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, dst, 0, src, 4, 4));
        // The limit counts, not the capacity.
        src.limit(12);
        assertThrows(
                IllegalArgumentException.class,
                () -> Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, dst, 0, src, 0, 4));
        assertMessage(
                "bufOffset: 8 (expected: >= 0, with 2 elements of 8 bytes ending at 24 <= limit"
                        + " 16)",
                () -> Reductions.scale(DataType.FLOAT64, dst, 8, 2, 2));
        // Zero elements anywhere within the limit are fine.
        Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, dst, 16, src, 12, 0);
        Reductions.divide(DataType.FLOAT32, dst, 16, 0, 2);
    }

    @Test
    void rejectsOverlappingRangesInOneBuffer() {
        ByteBuffer buf = ByteBuffer.allocate(32);
        assertMessage(
                "srcOffset: 4 (expected: src's 8 bytes not to overlap dst's at 0 in the same"
                        + " buffer)",
                () -> Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, buf, 0, buf, 4, 2));
        assertThrows(
                IllegalArgumentException.class,
                () -> Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, buf, 4, buf, 0, 2));
        assertThrows(
                IllegalArgumentException.class,
                () -> Reductions.reduce(ReduceOp.Type.MAX, DataType.INT8, buf, 3, buf, 3, 1));
        Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, buf, 0, buf, 8, 2);
        Reductions.reduce(ReduceOp.Type.SUM, DataType.INT32, buf, 8, buf, 0, 2);
    }

    @Test
    void refusesReadOnlyDestinations() {
        ByteBuffer readOnly = ByteBuffer.allocate(8).asReadOnlyBuffer();
        ByteBuffer writable = ByteBuffer.allocate(8);
        assertThrows(
                ReadOnlyBufferException.class,
                () ->
                        Reductions.reduce(
                                ReduceOp.Type.SUM, DataType.INT8, readOnly, 0, writable, 0, 8));
        assertThrows(
                ReadOnlyBufferException.class,
                () -> Reductions.scale(DataType.FLOAT32, readOnly, 0, 2, 2));
        // A read-only source is fine.
        writable.put(0, (byte) 1);
        Reductions.reduce(ReduceOp.Type.SUM, DataType.INT8, writable, 0, readOnly, 0, 8);
        assertEquals(1, writable.get(0));
    }

    @Test
    void rejectsNulls() {
        ByteBuffer buf = ByteBuffer.allocate(8);
        assertThrows(
                NullPointerException.class, () -> Reductions.checkSupported(null, DataType.INT8));
        assertThrows(
                NullPointerException.class, () -> Reductions.checkSupported(ReduceOp.SUM, null));
        assertThrows(
                NullPointerException.class,
                () -> Reductions.reduce(ReduceOp.Type.SUM, DataType.INT8, null, 0, buf, 0, 1));
        assertThrows(
                NullPointerException.class,
                () -> Reductions.reduce(ReduceOp.Type.SUM, DataType.INT8, buf, 0, null, 0, 1));
    }

    private static void assertMessage(String expected, Runnable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertEquals(expected, e.getMessage());
    }
}
