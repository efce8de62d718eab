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
import static org.junit.jupiter.api.Assertions.assertSame;

import ai.djl.Device;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.AbstractBlock;
import ai.djl.nn.Parameter;
import ai.djl.nn.core.Linear;
import ai.djl.training.ParameterStore;
import ai.djl.util.Pair;
import ai.djl.util.PairList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What a forward pass through the recording store reveals, on ranks whose models take different
 * paths, and the start-up synchronization a trainer builds on it.
 */
@Timeout(60)
class RecordingParameterStoreTest {

    private static final int IN = 3;

    /**
     * Three layers defined as {@code last, first, middle}; a forward pass runs {@code first}, then
     * {@code middle} when asked to, then {@code last}.
     */
    private static final class Paths extends AbstractBlock {

        private final Linear last;
        private final Linear first;
        private final Linear middle;
        private final boolean useMiddle;

        Paths(boolean useMiddle) {
            this.useMiddle = useMiddle;
            last = addChildBlock("last", Linear.builder().setUnits(2).build());
            first = addChildBlock("first", Linear.builder().setUnits(4).build());
            middle = addChildBlock("middle", Linear.builder().setUnits(4).build());
        }

        @Override
        protected NDList forwardInternal(
                ParameterStore ps,
                NDList inputs,
                boolean training,
                PairList<String, Object> params) {
            NDList h = first.forward(ps, inputs, training, params);
            if (useMiddle) {
                h = middle.forward(ps, h, training, params);
            }
            return last.forward(ps, h, training, params);
        }

        @Override
        public Shape[] getOutputShapes(Shape[] inputShapes) {
            return new Shape[] {new Shape(inputShapes[0].get(0), 2)};
        }

        @Override
        protected void initializeChildBlocks(
                NDManager manager, DataType dataType, Shape... inputShapes) {
            Shape hidden = new Shape(inputShapes[0].get(0), 4);
            first.initialize(manager, dataType, inputShapes);
            middle.initialize(manager, dataType, hidden);
            last.initialize(manager, dataType, hidden);
        }
    }

    /** Parameter ids in definition order: last.w, last.b, first.w, first.b, middle.w, middle.b. */
    private static String[] ids(AbstractBlock block) {
        List<String> ids = new ArrayList<>();
        for (Pair<String, Parameter> p : block.getParameters()) {
            ids.add(p.getValue().getId());
        }
        return ids.toArray(new String[0]);
    }

    @Test
    void eachRankRecordsTheOrderOfFirstUseOfItsOwnPath() throws Exception {
        List<int[][]> got =
                MultiRank.run(
                        2,
                        Duration.ofSeconds(30),
                        (group, manager) -> {
                            Paths block = new Paths(group.getRank() == 1);
                            block.initialize(manager, DataType.FLOAT32, new Shape(5, IN));
                            RecordingParameterStore store = new RecordingParameterStore(manager);
                            store.track(ids(block));
                            int[] fetches = new int[6];
                            store.setBeforeUse(i -> fetches[i]++);
                            NDArray x = manager.ones(new Shape(5, IN));
                            // two training passes: only the first use of each counts
                            block.forward(store, new NDList(x), true);
                            block.forward(store, new NDList(x), true);
                            int[] order = store.takeUseOrder();
                            int[] afterTaking = store.takeUseOrder();
                            // an evaluation pass runs the action but records nothing
                            block.forward(store, new NDList(x), false);
                            int[] evaluation = store.takeUseOrder();
                            return new int[][] {order, afterTaking, evaluation, fetches};
                        });
        // rank 0: first (2, 3), last (0, 1); rank 1: first, middle (4, 5), last
        assertArrayEquals(new int[] {2, 3, 0, 1}, got.get(0)[0]);
        assertArrayEquals(new int[] {2, 3, 4, 5, 0, 1}, got.get(1)[0]);
        for (int[][] rank : got) {
            assertArrayEquals(new int[0], rank[1], "taking starts afresh");
            assertArrayEquals(new int[0], rank[2], "evaluation passes are not recorded");
        }
        assertArrayEquals(new int[] {3, 3, 3, 3, 0, 0}, got.get(0)[3]);
        assertArrayEquals(new int[] {3, 3, 3, 3, 3, 3}, got.get(1)[3]);
    }

    @Test
    void untrackedParametersAreHandedOutButNotRecorded() throws Exception {
        try (NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            Paths block = new Paths(true);
            block.initialize(manager, DataType.FLOAT32, new Shape(2, IN));
            String[] all = ids(block);
            RecordingParameterStore store = new RecordingParameterStore(manager);
            // only the middle layer, as indices 0 and 1
            store.track(new String[] {all[4], all[5]});
            block.forward(store, new NDList(manager.ones(new Shape(2, IN))), true);
            assertArrayEquals(new int[] {0, 1}, store.takeUseOrder());
            Parameter weight = block.getParameters().get(2).getValue();
            assertSame(weight.getArray(), store.array(weight, Device.cpu()));
        }
    }

    /**
     * The start-up synchronization a trainer runs over the store's arrays: every rank ends with
     * rank 0's values, and the layout splits trainable parameters from frozen ones.
     */
    @Test
    void modelSyncOverTheStoresArraysGivesEveryRankRankZerosValues() throws Exception {
        List<float[]> got =
                MultiRank.run(
                        3,
                        Duration.ofSeconds(30),
                        (group, manager) -> {
                            Paths block = new Paths(true);
                            block.initialize(manager, DataType.FLOAT32, new Shape(1, IN));
                            // rank-dependent values: rank r's parameters are all r + 1
                            for (Pair<String, Parameter> p : block.getParameters()) {
                                NDArray a = p.getValue().getArray();
                                InPlace.copy(
                                        manager.full(a.getShape(), group.getRank() + 1f),
                                        a,
                                        p.getKey());
                            }
                            block.getParameters().get(0).getValue().freeze(true);
                            RecordingParameterStore store = new RecordingParameterStore(manager);
                            ModelSync.Layout layout =
                                    ModelSync.layout(
                                            block.getParameters(),
                                            p -> store.array(p, Device.cpu()));
                            ModelSync.verifyAcrossRanks(group, layout.signature());
                            List<NDArray> arrays = new ArrayList<>();
                            for (Parameter[] ps : List.of(layout.grads(), layout.frozen())) {
                                for (Parameter p : ps) {
                                    arrays.add(store.array(p, Device.cpu()));
                                }
                            }
                            assertEquals(5, layout.grads().length);
                            assertEquals(1, layout.frozen().length);
                            assertEquals(0, layout.buffers().length);
                            ModelSync.broadcast(group, arrays);
                            float[] values = new float[0];
                            for (NDArray a : arrays) {
                                float[] v = a.toFloatArray();
                                values = Arrays.copyOf(values, values.length + v.length);
                                System.arraycopy(v, 0, values, values.length - v.length, v.length);
                            }
                            return values;
                        });
        // 4*3 + 4 + 4*4 + 4 + 2*4 + 2 elements, every one rank 0's 1.0
        float[] expected = new float[12 + 4 + 16 + 4 + 8 + 2];
        Arrays.fill(expected, 1f);
        for (float[] values : got) {
            assertArrayEquals(expected, values);
        }
    }
}
