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
package ai.djl.distributed.parallel;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.engine.Engine;
import ai.djl.ndarray.BaseNDManager;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.GradientCollector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Both copy paths of {@link FlatBuffer} (memory copies, and the NDArray operations a GPU takes,
 * forced here on the CPU) against expectations computed apart: NDArray concatenation of the
 * flattened arrays, and each array's own values.
 */
class FlatBufferTest {

    private static final List<Shape> SHAPES =
            List.of(new Shape(3, 4), new Shape(5), new Shape(0), new Shape(2, 3, 2), new Shape());

    /** Distinct values per slot, so that a slot written at the wrong offset shows. */
    private static List<NDArray> arrays(NDManager m, List<Shape> shapes, float base) {
        List<NDArray> arrays = new ArrayList<>();
        for (int k = 0; k < shapes.size(); k++) {
            float[] v = new float[(int) shapes.get(k).size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = base + 100 * k + i * 0.5f;
            }
            arrays.add(m.create(v, shapes.get(k)));
        }
        return arrays;
    }

    private static NDArray concatFlattened(List<NDArray> arrays) {
        NDList flat = new NDList();
        for (NDArray a : arrays) {
            flat.add(a.reshape(-1));
        }
        return NDArrays.concat(flat);
    }

    private static void assertElements(float[] expected, NDArray actual, String what) {
        float[] got = actual.toFloatArray();
        assertEquals(expected.length, got.length, what);
        for (int i = 0; i < expected.length; i++) {
            assertEquals(expected[i], got[i], what + "[" + i + "]");
        }
    }

    @ParameterizedTest(name = "memory copies: {0}")
    @ValueSource(booleans = {true, false})
    void packLaysArraysBackToBackAsConcatenationDoes(boolean memoryCopies) {
        try (NDManager m = NDManager.newBaseManager(Device.cpu());
                FlatBuffer b = new FlatBuffer("test", m, DataType.FLOAT32, SHAPES, memoryCopies)) {
            assertEquals(memoryCopies, b.copiesMemory());
            List<NDArray> xs = arrays(m, SHAPES, 1);
            // a non-contiguous source (a transpose) is read by value, not by memory layout
            xs.set(
                    0,
                    m.create(
                                    arrays(m, List.of(new Shape(4, 3)), 1).get(0).toFloatArray(),
                                    new Shape(4, 3))
                            .transpose());
            b.pack(xs);
            assertEquals(new Shape(12 + 5 + 0 + 12 + 1), b.getArray().getShape());
            assertElements(concatFlattened(xs).toFloatArray(), b.getArray(), "flat");
            long offset = 0;
            for (int i = 0; i < SHAPES.size(); i++) {
                assertEquals(offset, b.getOffset(i));
                assertEquals(SHAPES.get(i).size(), b.getLength(i));
                offset += SHAPES.get(i).size();
            }
        }
    }

    @ParameterizedTest(name = "memory copies: {0}")
    @ValueSource(booleans = {true, false})
    void nullPacksZerosAndRepackingOverwrites(boolean memoryCopies) {
        try (NDManager m = NDManager.newBaseManager(Device.cpu());
                FlatBuffer b = new FlatBuffer("test", m, DataType.FLOAT32, SHAPES, memoryCopies)) {
            b.pack(arrays(m, SHAPES, 7));
            List<NDArray> second = arrays(m, SHAPES, -3);
            List<NDArray> expected = new ArrayList<>(second);
            second.set(3, null);
            expected.set(3, m.zeros(SHAPES.get(3)));
            b.pack(second);
            assertElements(concatFlattened(expected).toFloatArray(), b.getArray(), "flat");
        }
    }

    /**
     * Zeroing a slot, as a DDP bucket does each step for a parameter without a gradient and FSDP
     * for a unit's padding, leaves no array behind in the buffer's manager (which lives as long as
     * the trainer), and zeroes that slot only. Float64: the type whose missing gradients DDP
     * zeroes.
     */
    @ParameterizedTest(name = "memory copies: {0}")
    @ValueSource(booleans = {true, false})
    void zeroingSlotsLeavesNoArrayBehind(boolean memoryCopies) {
        try (NDManager m = NDManager.newBaseManager(Device.cpu());
                FlatBuffer b = new FlatBuffer("test", m, DataType.FLOAT64, SHAPES, memoryCopies)) {
            List<NDArray> xs = new ArrayList<>();
            for (NDArray x : arrays(m, SHAPES, 3)) {
                xs.add(x.toType(DataType.FLOAT64, false));
            }
            b.pack(xs);
            BaseNDManager owner = (BaseNDManager) b.getArray().getManager();
            int before = owner.getManagedArrays().size();
            // A buffer that has not zeroed holds its flat array and views only, as FSDP's gather
            // buffers, made per unit per pass, never zero.
            assertEquals(1 + SHAPES.size(), before, "arrays of a buffer that never zeroed");
            for (int k = 0; k < 500; k++) {
                b.zero(0);
                b.zero(3);
                b.pack(4, null);
            }
            assertEquals(before, owner.getManagedArrays().size(), "arrays in the buffer's manager");
            List<NDArray> expected = new ArrayList<>(xs);
            for (int i : new int[] {0, 3, 4}) {
                expected.set(i, m.zeros(SHAPES.get(i), DataType.FLOAT64));
            }
            assertArrayEquals(
                    concatFlattened(expected).toDoubleArray(), b.getArray().toDoubleArray());
        }
    }

    @ParameterizedTest(name = "memory copies: {0}")
    @ValueSource(booleans = {true, false})
    void viewsAreShapedLikeEachSlotAndShareTheFlatMemory(boolean memoryCopies) {
        try (NDManager m = NDManager.newBaseManager(Device.cpu());
                FlatBuffer b = new FlatBuffer("test", m, DataType.FLOAT32, SHAPES, memoryCopies)) {
            List<NDArray> xs = arrays(m, SHAPES, 2);
            b.pack(xs);
            NDArray[] views = b.views();
            for (int i = 0; i < SHAPES.size(); i++) {
                assertEquals(SHAPES.get(i), views[i].getShape());
                assertElements(xs.get(i).toFloatArray(), views[i], "slot " + i);
            }
            // a collective writes the flat array in place: the views see it
            b.getArray().muli(3);
            for (int i = 0; i < SHAPES.size(); i++) {
                float[] x = xs.get(i).toFloatArray();
                for (int k = 0; k < x.length; k++) {
                    x[k] *= 3;
                }
                assertElements(x, views[i], "slot " + i + " after an in-place write");
            }
            // another flat array of the same layout (a hook's result)
            NDArray other = concatFlattened(arrays(m, SHAPES, 9));
            NDArray[] vs = b.views(other);
            List<NDArray> expected = arrays(m, SHAPES, 9);
            for (int i = 0; i < SHAPES.size(); i++) {
                assertEquals(SHAPES.get(i), vs[i].getShape());
                assertElements(expected.get(i).toFloatArray(), vs[i], "other, slot " + i);
            }
            assertThrows(IllegalArgumentException.class, () -> b.views(m.zeros(new Shape(3))));
        }
    }

    @ParameterizedTest(name = "memory copies: {0}")
    @ValueSource(booleans = {true, false})
    void unpackWritesEachSlotOverItsArrayInPlace(boolean memoryCopies) {
        try (NDManager m = NDManager.newBaseManager(Device.cpu());
                FlatBuffer b = new FlatBuffer("test", m, DataType.FLOAT32, SHAPES, memoryCopies)) {
            List<NDArray> xs = arrays(m, SHAPES, 4);
            b.pack(xs);
            List<NDArray> targets = new ArrayList<>();
            for (Shape s : SHAPES) {
                targets.add(m.ones(s));
            }
            // a parameter that requires gradients is written too, and stays a leaf
            targets.get(0).setRequiresGradient(true);
            NDArray before = targets.get(1);
            b.unpack(targets);
            assertTrue(before == targets.get(1));
            for (int i = 0; i < SHAPES.size(); i++) {
                assertEquals(SHAPES.get(i), targets.get(i).getShape());
                assertElements(xs.get(i).toFloatArray(), targets.get(i), "target " + i);
            }
            assertTrue(targets.get(0).hasGradient());
        }
    }

    @ParameterizedTest(name = "memory copies: {0}")
    @ValueSource(booleans = {true, false})
    @SuppressWarnings("try") // the collector only turns recording on
    void packingAValueThatRequiresGradientsRecordsNoHistory(boolean memoryCopies) {
        try (NDManager m = NDManager.newBaseManager(Device.cpu());
                FlatBuffer b = new FlatBuffer("test", m, DataType.FLOAT32, SHAPES, memoryCopies)) {
            List<NDArray> xs = arrays(m, SHAPES, 5);
            xs.get(1).setRequiresGradient(true);
            try (GradientCollector gc = Engine.getInstance().newGradientCollector()) {
                b.pack(xs);
            }
            assertFalse(b.getArray().hasGradient());
            assertElements(concatFlattened(xs).toFloatArray(), b.getArray(), "flat");
        }
    }

    @ParameterizedTest(name = "memory copies: {0}")
    @ValueSource(booleans = {true, false})
    void mismatchesAreRefusedNamingTheBufferAndSlot(boolean memoryCopies) {
        try (NDManager m = NDManager.newBaseManager(Device.cpu());
                FlatBuffer b =
                        new FlatBuffer("bucket 7", m, DataType.FLOAT32, SHAPES, memoryCopies)) {
            IllegalArgumentException size =
                    assertThrows(
                            IllegalArgumentException.class, () -> b.pack(1, m.zeros(new Shape(4))));
            assertTrue(
                    size.getMessage().startsWith("bucket 7, slot 1: float32 (4)"),
                    size.getMessage());
            IllegalArgumentException type =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> b.pack(1, m.zeros(new Shape(5), DataType.FLOAT64)));
            assertTrue(type.getMessage().contains("expected: float32 (5)"), type.getMessage());
            assertThrows(
                    IllegalArgumentException.class, () -> b.pack(List.of(m.zeros(new Shape(1)))));
            assertThrows(IllegalArgumentException.class, () -> b.unpack(3, m.zeros(new Shape(11))));
        }
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            assertThrows(
                    IllegalArgumentException.class,
                    () -> new FlatBuffer("empty", m, DataType.FLOAT32, List.of(), memoryCopies));
        }
    }

    /** On the CPU the device chooses memory copies; other types keep their bytes exactly. */
    @org.junit.jupiter.api.Test
    void aCpuBufferCopiesMemoryAndKeepsOtherTypesExact() {
        List<Shape> shapes = List.of(new Shape(3), new Shape(2, 2));
        try (NDManager m = NDManager.newBaseManager(Device.cpu());
                FlatBuffer b = new FlatBuffer("ints", m, DataType.INT64, shapes)) {
            assertTrue(b.copiesMemory());
            long[] first = {Long.MAX_VALUE, -1, 3};
            long[] second = {Long.MIN_VALUE, 5, 6, 7};
            b.pack(List.of(m.create(first), m.create(second, new Shape(2, 2))));
            long[] all = Arrays.copyOf(first, 7);
            System.arraycopy(second, 0, all, 3, 4);
            assertArrayEquals(all, b.getArray().toLongArray());
        }
    }

    @Test
    void aBufferOverAGivenArrayWritesIntoItAndLeavesItOpen() {
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            NDArray flat = m.create(new float[] {9, 9, 9, 9, 9, 9, 9});
            List<Shape> shapes = List.of(new Shape(2, 2), new Shape(3));
            try (FlatBuffer buffer = new FlatBuffer("given", flat, shapes)) {
                assertTrue(buffer.getArray() == flat);
                buffer.pack(
                        List.of(
                                m.create(new float[] {1, 2, 3, 4}, new Shape(2, 2)),
                                m.create(new float[] {5, 6, 7})));
                assertEquals(new Shape(2, 2), buffer.views()[0].getShape());
                assertArrayEquals(new float[] {5, 6, 7}, buffer.views()[1].toFloatArray());
            }
            // The values went into the given array, which closing the buffer left open.
            assertArrayEquals(new float[] {1, 2, 3, 4, 5, 6, 7}, flat.toFloatArray());
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> new FlatBuffer("short", m.zeros(new Shape(6)), shapes));
            assertEquals("short: (6) (expected: (7), the slots' total)", e.getMessage());
        }
    }
}
