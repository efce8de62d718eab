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
import static org.junit.jupiter.api.Assertions.fail;

import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Random;

/**
 * {@link TorchReductions} against {@link ReferenceOps}, with every size sent to libtorch, and its
 * fallbacks to {@link Reductions}.
 */
class TorchReductionsTest {

    private static final DataType[] TYPES = {
        DataType.FLOAT32, DataType.FLOAT64, DataType.FLOAT16, DataType.BFLOAT16
    };
    private static final int[] COUNTS = {1, 7, 1031, 40_001};

    private static NDManager manager;
    private static TorchReductions torch;

    @BeforeAll
    static void start() {
        manager = NDManager.newBaseManager("PyTorch");
        torch = new TorchReductions(manager, 0, 0);
    }

    @AfterAll
    static void stop() {
        manager.close();
    }

    @Test
    void reducesLikeTheReference() {
        Random random = new Random(7);
        for (DataType type : TYPES) {
            for (ReduceOp.Type op :
                    new ReduceOp.Type[] {
                        ReduceOp.Type.SUM, ReduceOp.Type.PRODUCT, ReduceOp.Type.MAX
                    }) {
                for (int count : COUNTS) {
                    check(op, type, count, random.nextBoolean(), random);
                }
            }
        }
        // Bitwise operations and heap buffers go to Reductions.
        check(ReduceOp.Type.BXOR, DataType.INT32, 1031, false, random);
        check(ReduceOp.Type.SUM, DataType.INT8, 1031, false, random);
    }

    @Test
    void scalesAndDividesLikeTheReference() {
        Random random = new Random(8);
        for (DataType type : TYPES) {
            for (int count : COUNTS) {
                for (double factor : new double[] {1.0 / 3, 7.1, 1e-30}) {
                    checkScale(type, count, factor, false, random);
                    checkScale(type, count, factor, true, random);
                }
            }
        }
    }

    @Test
    void checksArgumentsAsReductionsDoes() {
        ByteBuffer buf = ByteBuffer.allocateDirect(16);
        assertThrows(
                IllegalArgumentException.class,
                () -> torch.reduce(ReduceOp.Type.SUM, DataType.FLOAT32, buf, 0, buf, 4, 2));
        assertThrows(
                IllegalArgumentException.class,
                () -> torch.reduce(ReduceOp.Type.BAND, DataType.FLOAT16, buf, 0, buf, 8, 2));
        assertThrows(
                IllegalArgumentException.class, () -> torch.divide(DataType.INT32, buf, 0, 2, 2));
        assertThrows(
                IllegalArgumentException.class, () -> torch.scale(DataType.FLOAT32, buf, 12, 2, 2));
        assertThrows(IllegalArgumentException.class, () -> new TorchReductions(manager, -1, 0));
        assertThrows(IllegalArgumentException.class, () -> new TorchReductions(manager, 0, -1));
    }

    private static void check(
            ReduceOp.Type op, DataType type, int count, boolean oneBuffer, Random random) {
        int size = type.getNumOfBytes();
        int bytes = count * size;
        ByteBuffer dst = TestBuffers.allocate(true, 2 * bytes + 8, random);
        ByteBuffer writableSrc = oneBuffer ? dst : TestBuffers.allocate(true, bytes + 8, random);
        int dstOffset = 3;
        int srcOffset = oneBuffer ? dstOffset + bytes + 1 : 5;
        for (int i = 0; i < count; i++) {
            TestBuffers.put(dst, dstOffset, i, size, TestBuffers.element(type, random));
            TestBuffers.put(writableSrc, srcOffset, i, size, TestBuffers.element(type, random));
        }
        // A separate source is passed read-only.
        ByteBuffer src = oneBuffer ? dst : writableSrc.asReadOnlyBuffer();
        byte[] dstBefore = TestBuffers.bytes(dst);
        byte[] srcBefore = TestBuffers.bytes(writableSrc);
        int limit = dst.limit();

        torch.reduce(op, type, dst, dstOffset, src, srcOffset, count);

        assertEquals(limit, dst.limit());
        byte[] dstAfter = TestBuffers.bytes(dst);
        for (int i = 0; i < count; i++) {
            long a = TestBuffers.get(dstBefore, dstOffset, i, size);
            long b = TestBuffers.get(srcBefore, srcOffset, i, size);
            long expected = ReferenceOps.apply(op, type, a, b);
            long actual = TestBuffers.get(dstAfter, dstOffset, i, size);
            if (!ReferenceOps.same(type, expected, actual)) {
                fail(
                        String.format(
                                "%s %s count %d: element %d: op(0x%X, 0x%X) expected 0x%X but was"
                                        + " 0x%X",
                                op, type, count, i, a, b, expected, actual));
            }
        }
        assertEquals(dstBefore[dstOffset - 1], dstAfter[dstOffset - 1]);
        assertEquals(dstBefore[dstOffset + bytes], dstAfter[dstOffset + bytes]);
    }

    private static void checkScale(
            DataType type, int count, double factor, boolean divide, Random random) {
        int size = type.getNumOfBytes();
        ByteBuffer buf = TestBuffers.allocate(true, count * size + 2, random);
        for (int i = 0; i < count; i++) {
            TestBuffers.put(buf, 1, i, size, TestBuffers.element(type, random));
        }
        byte[] before = TestBuffers.bytes(buf);
        if (divide) {
            torch.divide(type, buf, 1, count, factor);
        } else {
            torch.scale(type, buf, 1, count, factor);
        }
        byte[] after = TestBuffers.bytes(buf);
        for (int i = 0; i < count; i++) {
            long a = TestBuffers.get(before, 1, i, size);
            long expected = ReferenceOps.scale(type, a, factor, divide);
            long actual = TestBuffers.get(after, 1, i, size);
            if (!ReferenceOps.same(type, expected, actual)) {
                fail(
                        String.format(
                                "%s %s by %s: element %d: 0x%X expected 0x%X but was 0x%X",
                                divide ? "divide" : "scale", type, factor, i, a, expected, actual));
            }
        }
        assertEquals(before[0], after[0]);
        assertEquals(before[before.length - 1], after[after.length - 1]);
    }
}
