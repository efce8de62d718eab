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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;

/**
 * Every operation on every type it applies to, on random data against {@link ReferenceOps}: counts
 * from 0 to several blocks, unaligned offsets, heap and direct buffers in every pairing and both
 * operands in one buffer; bytes outside the range, the source, and the buffers' position, limit and
 * order must not change.
 */
class ReductionsTest {

    static final DataType[] TYPES = {
        DataType.FLOAT32,
        DataType.FLOAT64,
        DataType.FLOAT16,
        DataType.BFLOAT16,
        DataType.INT8,
        DataType.UINT8,
        DataType.INT32,
        DataType.INT64,
        DataType.BOOLEAN
    };

    private static final int[] COUNTS = {0, 1, 7, 1031, 4099};

    /** How the two operands are held. */
    enum Layout {
        HEAP_HEAP,
        DIRECT_DIRECT,
        HEAP_DIRECT,
        DIRECT_HEAP,
        ONE_BUFFER
    }

    static Stream<Arguments> opsAndTypes() {
        List<Arguments> cases = new ArrayList<>();
        for (DataType type : TYPES) {
            for (ReduceOp.Type op : ReduceOp.Type.values()) {
                boolean bitwise =
                        op == ReduceOp.Type.BAND
                                || op == ReduceOp.Type.BOR
                                || op == ReduceOp.Type.BXOR;
                boolean averaging = op == ReduceOp.Type.AVG || op == ReduceOp.Type.PREMUL_SUM;
                if (!averaging && !(bitwise && type.isFloating())) {
                    cases.add(Arguments.of(op, type));
                }
            }
        }
        return cases.stream();
    }

    @ParameterizedTest
    @MethodSource("opsAndTypes")
    void reducesLikeTheReference(ReduceOp.Type op, DataType type) {
        Random random = new Random(31L * op.ordinal() + type.ordinal());
        for (int count : COUNTS) {
            for (Layout layout : Layout.values()) {
                check(op, type, count, layout, random);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(
            value = DataType.class,
            names = {"FLOAT32", "FLOAT16", "BFLOAT16", "INT8", "BOOLEAN"})
    void reducesManyBlocks(DataType type) {
        Random random = new Random(type.ordinal());
        ReduceOp.Type op = type == DataType.BOOLEAN ? ReduceOp.Type.BXOR : ReduceOp.Type.SUM;
        check(op, type, 100_003, Layout.DIRECT_DIRECT, random);
        check(ReduceOp.Type.MAX, type, 100_003, Layout.HEAP_DIRECT, random);
    }

    @ParameterizedTest
    @EnumSource(
            value = DataType.class,
            names = {"FLOAT32", "FLOAT64", "FLOAT16", "BFLOAT16"})
    void scalesAndDivides(DataType type) {
        Random random = new Random(type.ordinal());
        double[] factors = {0.125, 1.0 / 3, 3, 7.1, -0.5, 1e-30};
        for (int count : COUNTS) {
            for (double factor : factors) {
                for (boolean divide : new boolean[] {false, true}) {
                    checkScale(type, count, factor, divide, random.nextBoolean(), random);
                }
            }
        }
    }

    private static void check(
            ReduceOp.Type op, DataType type, int count, Layout layout, Random random) {
        int size = type.getNumOfBytes();
        int bytes = count * size;
        // Unaligned offsets, guard bytes after each range and past the limit.
        int dstOffset = 3;
        boolean directDst = layout == Layout.DIRECT_DIRECT || layout == Layout.DIRECT_HEAP;
        boolean directSrc = layout == Layout.DIRECT_DIRECT || layout == Layout.HEAP_DIRECT;
        ByteBuffer dst;
        ByteBuffer src;
        int srcOffset;
        if (layout == Layout.ONE_BUFFER) {
            srcOffset = dstOffset + bytes + 1;
            dst = TestBuffers.allocate(random.nextBoolean(), srcOffset + bytes + 5, random);
            src = dst;
        } else {
            srcOffset = 5;
            dst = TestBuffers.allocate(directDst, dstOffset + bytes + 5, random);
            src = TestBuffers.allocate(directSrc, srcOffset + bytes + 5, random);
        }
        for (int i = 0; i < count; i++) {
            TestBuffers.put(dst, dstOffset, i, size, TestBuffers.element(type, random));
            TestBuffers.put(src, srcOffset, i, size, TestBuffers.element(type, random));
        }
        dst.limit(dst.capacity() - 2).position(1);
        if (src != dst) {
            src.limit(src.capacity() - 1).position(2).order(ByteOrder.LITTLE_ENDIAN);
        }
        byte[] dstBefore = TestBuffers.bytes(dst);
        byte[] srcBefore = TestBuffers.bytes(src);

        Reductions.reduce(op, type, dst, dstOffset, src, srcOffset, count);

        String where = op + " " + type + " count " + count + " " + layout;
        byte[] dstAfter = TestBuffers.bytes(dst);
        for (int i = 0; i < count; i++) {
            long a = TestBuffers.get(dstBefore, dstOffset, i, size);
            long b = TestBuffers.get(srcBefore, srcOffset, i, size);
            long expected = ReferenceOps.apply(op, type, a, b);
            long actual = TestBuffers.get(dstAfter, dstOffset, i, size);
            if (!ReferenceOps.same(type, expected, actual)) {
                fail(
                        String.format(
                                "%s: element %d: op(0x%X, 0x%X) expected 0x%X but was 0x%X",
                                where, i, a, b, expected, actual));
            }
        }
        for (int i = 0; i < dstAfter.length; i++) {
            if (i < dstOffset || i >= dstOffset + bytes) {
                assertEquals(dstBefore[i], dstAfter[i], where + ": byte " + i + " outside dst");
            }
        }
        if (src != dst) {
            assertArrayEquals(srcBefore, TestBuffers.bytes(src), where + ": src changed");
            assertEquals(2, src.position(), where);
            assertEquals(src.capacity() - 1, src.limit(), where);
            assertEquals(ByteOrder.LITTLE_ENDIAN, src.order(), where);
        }
        assertEquals(1, dst.position(), where);
        assertEquals(dst.capacity() - 2, dst.limit(), where);
        assertEquals(ByteOrder.BIG_ENDIAN, dst.order(), where);
    }

    private static void checkScale(
            DataType type,
            int count,
            double factor,
            boolean divide,
            boolean direct,
            Random random) {
        int size = type.getNumOfBytes();
        int offset = 1;
        ByteBuffer buf = TestBuffers.allocate(direct, offset + count * size + 3, random);
        for (int i = 0; i < count; i++) {
            TestBuffers.put(buf, offset, i, size, TestBuffers.element(type, random));
        }
        byte[] before = TestBuffers.bytes(buf);
        if (divide) {
            Reductions.divide(type, buf, offset, count, factor);
        } else {
            Reductions.scale(type, buf, offset, count, factor);
        }
        byte[] after = TestBuffers.bytes(buf);
        for (int i = 0; i < count; i++) {
            long a = TestBuffers.get(before, offset, i, size);
            long expected = ReferenceOps.scale(type, a, factor, divide);
            long actual = TestBuffers.get(after, offset, i, size);
            if (!ReferenceOps.same(type, expected, actual)) {
                fail(
                        String.format(
                                "%s %s %s by %s: element %d: 0x%X expected 0x%X but was 0x%X",
                                divide ? "divide" : "scale",
                                type,
                                count,
                                factor,
                                i,
                                a,
                                expected,
                                actual));
            }
        }
        assertEquals(before[0], after[0]);
        for (int i = offset + count * size; i < after.length; i++) {
            assertEquals(before[i], after[i], "byte " + i + " past the range");
        }
    }
}
