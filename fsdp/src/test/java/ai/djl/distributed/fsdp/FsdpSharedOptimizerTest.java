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
package ai.djl.distributed.fsdp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.distributed.parallel.OptimizerState;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Trainers that share one optimizer, as two trainers made from one {@code TrainingConfig} do: each
 * model trains as it would under plain DJL trainers, its optimizer state its own, freed when its
 * trainer closes and replaced by its checkpoints only.
 */
@Timeout(180)
class FsdpSharedOptimizerTest {

    private static final int RANKS = 2;
    private static final int STEPS = 2;

    @TempDir Path dir;

    /** 6 -> hidden -> 5, with deterministic parameters. */
    private static Block mlp(int hidden) {
        Block b =
                new SequentialBlock()
                        .add(Linear.builder().setUnits(hidden).build())
                        .add(Activation::tanh)
                        .add(Linear.builder().setUnits(5).build());
        b.setInitializer(Fixture.deterministic(), p -> true);
        return b;
    }

    private static Optimizer adam() {
        return Optimizer.adam().optLearningRateTracker(Tracker.fixed(0.01f)).build();
    }

    private static Optimizer sgdWithMomentum() {
        return Optimizer.sgd()
                .setLearningRateTracker(Tracker.fixed(0.05f))
                .optMomentum(0.9f)
                .build();
    }

    /**
     * The reference: plain DJL trainers on the ranks' concatenated batches, one model after the
     * other, model {@code k} on the batches of steps {@code k * STEPS} on; with one optimizer for
     * all when {@code shared}, else each its own.
     */
    private static List<Map<String, float[]>> plain(
            int[] hiddens, Supplier<Optimizer> optimizer, boolean shared) {
        List<Map<String, float[]>> models = new ArrayList<>();
        DefaultTrainingConfig config = Fixture.config(optimizer.get(), Loss.l2Loss());
        for (int k = 0; k < hiddens.length; k++) {
            if (!shared) {
                config = Fixture.config(optimizer.get(), Loss.l2Loss());
            }
            try (Model model = Model.newInstance("mlp" + k);
                    NDManager m = NDManager.newBaseManager()) {
                model.setBlock(mlp(hiddens[k]));
                model.getBlock()
                        .initialize(model.getNDManager(), DataType.FLOAT32, new Shape(4, 6));
                try (Trainer t = model.newTrainer(config)) {
                    for (int s = k * STEPS; s < (k + 1) * STEPS; s++) {
                        Fixture.backward(t, Fixture.concatenatedRegression(m, s, RANKS));
                        t.step();
                    }
                }
                models.add(Fixture.snapshot(model.getBlock()));
            }
        }
        return models;
    }

    /** The same under FSDP at two ranks, every trainer of a rank built from one config. */
    private static List<Map<String, float[]>> fsdp(int[] hiddens, Supplier<Optimizer> optimizer)
            throws Exception {
        return Fixture.ranks(
                        RANKS,
                        (group, manager) -> {
                            DefaultTrainingConfig config =
                                    Fixture.config(optimizer.get(), Loss.l2Loss());
                            List<Map<String, float[]>> models = new ArrayList<>();
                            for (int k = 0; k < hiddens.length; k++) {
                                try (Model model = Model.newInstance("mlp" + k)) {
                                    model.setBlock(mlp(hiddens[k]));
                                    try (FullyShardedDataParallel t =
                                            FullyShardedDataParallel.builder()
                                                    .setModel(model)
                                                    .setTrainingConfig(config)
                                                    .setProcessGroup(group)
                                                    .build()) {
                                        t.initialize(new Shape(4, 6));
                                        for (int s = k * STEPS; s < (k + 1) * STEPS; s++) {
                                            Fixture.backward(
                                                    t,
                                                    Fixture.regression(
                                                            manager, s, group.getRank()));
                                            t.step();
                                        }
                                        Map<String, float[]> full = new LinkedHashMap<>();
                                        t.forEachFullParameter(
                                                (n, a) -> full.put(n, a.toFloatArray()));
                                        models.add(full);
                                    }
                                }
                            }
                            return models;
                        })
                .get(0);
    }

    private static void assertClose(
            List<Map<String, float[]>> expected, List<Map<String, float[]>> actual) {
        assertEquals(expected.size(), actual.size());
        for (int k = 0; k < expected.size(); k++) {
            assertEquals(expected.get(k).keySet(), actual.get(k).keySet());
            for (String name : expected.get(k).keySet()) {
                double err =
                        Fixture.relativeError(actual.get(k).get(name), expected.get(k).get(name));
                assertTrue(err <= 1e-5, "model " + k + ", " + name + ": " + err);
            }
        }
    }

    @Test
    void twoModelsOfOneShapeSharingAnOptimizerKeepTheirOwnMomentum() throws Exception {
        // Same units, same names: one optimizer id space would hand the second model the first
        // one's momentum. SGD's update reads nothing else of the optimizer, so each model must
        // train as with an optimizer of its own.
        int[] hiddens = {10, 10};
        assertClose(
                plain(hiddens, FsdpSharedOptimizerTest::sgdWithMomentum, false),
                fsdp(hiddens, FsdpSharedOptimizerTest::sgdWithMomentum));
    }

    @Test
    void twoModelsOfOtherShapesShareAnAdamAsPlainTrainersDo() throws Exception {
        // Units of one name but other sizes: shared ids would give the second model moments of the
        // wrong shape. Adam's bias correction reads the optimizer's update count, shared by every
        // parameter it updates, so the reference is DJL's own: plain trainers sharing it too.
        int[] hiddens = {10, 12};
        assertClose(plain(hiddens, Fixture::adamW, true), fsdp(hiddens, Fixture::adamW));
    }

    @Test
    void aClosedTrainerLeavesNoAdamMomentsInTheSharedOptimizer() throws Exception {
        closingFreesTheTrainersStateOnly(FsdpSharedOptimizerTest::adam);
    }

    @Test
    void aClosedTrainerLeavesNoMomentumInTheSharedOptimizer() throws Exception {
        closingFreesTheTrainersStateOnly(FsdpSharedOptimizerTest::sgdWithMomentum);
    }

    @Test
    void loadingAShardedCheckpointLeavesTheOtherTrainersStateAlone() throws Exception {
        Path fresh = dir.resolve("fresh");
        Path stepped = dir.resolve("stepped");
        Fixture.ranks(
                RANKS,
                (group, manager) -> {
                    Optimizer opt = Fixture.adamW();
                    DefaultTrainingConfig config = Fixture.config(opt, Loss.l2Loss());
                    try (Model a = Model.newInstance("a");
                            Model b = Model.newInstance("b");
                            FullyShardedDataParallel loading = trainer(a, config, group);
                            FullyShardedDataParallel other = trainer(b, config, group)) {
                        // No state arrays yet: the load that drops the loading trainer's moments.
                        FsdpCheckpoint.saveSharded(loading, fresh);
                        train(loading, manager, group);
                        train(other, manager, group);
                        FsdpCheckpoint.saveSharded(loading, stepped);
                        List<String> others = ids(other);
                        Map<String, Held> before = held(opt, others);
                        for (Path p : List.of(fresh, stepped)) {
                            FsdpCheckpoint.loadSharded(loading, p);
                            assertUntouched(before, held(opt, others), "after loading " + p);
                            for (String id : ids(loading)) {
                                int states = p == fresh ? 0 : 2;
                                int count = p == fresh ? 0 : STEPS;
                                assertEquals(states, OptimizerState.arrays(opt, id).size(), id);
                                assertEquals(count, OptimizerState.counts(opt, id)[0], id);
                            }
                        }
                        // the other trainer's moments still train
                        train(other, manager, group);
                    }
                    return null;
                });
    }

    /**
     * Two trainers sharing an optimizer at two ranks, both trained; the first closed: its state
     * arrays are closed and its ids gone from the optimizer, the second's state untouched.
     */
    private static void closingFreesTheTrainersStateOnly(Supplier<Optimizer> optimizer)
            throws Exception {
        Fixture.ranks(
                RANKS,
                (group, manager) -> {
                    Optimizer opt = optimizer.get();
                    DefaultTrainingConfig config = Fixture.config(opt, Loss.l2Loss());
                    try (Model a = Model.newInstance("a");
                            Model b = Model.newInstance("b");
                            FullyShardedDataParallel kept = trainer(b, config, group)) {
                        train(kept, manager, group);
                        List<String> closedIds;
                        List<NDArray> closedArrays = new ArrayList<>();
                        Map<String, Held> before;
                        try (FullyShardedDataParallel closed = trainer(a, config, group)) {
                            train(closed, manager, group);
                            closedIds = ids(closed);
                            for (String id : closedIds) {
                                closedArrays.addAll(OptimizerState.arrays(opt, id));
                            }
                            assertFalse(closedArrays.isEmpty(), "state before close");
                            before = held(opt, ids(kept));
                        }
                        for (String id : closedIds) {
                            assertTrue(OptimizerState.arrays(opt, id).isEmpty(), id);
                            assertEquals(0, OptimizerState.counts(opt, id)[0], id);
                        }
                        for (NDArray s : closedArrays) {
                            assertTrue(s.isReleased(), "a closed trainer's state array");
                        }
                        assertUntouched(before, held(opt, ids(kept)), "after the other's close");
                        train(kept, manager, group);
                    }
                    return null;
                });
    }

    /** An MLP trainer of the config, initialized, with ranges small enough for several ids. */
    private static FullyShardedDataParallel trainer(
            Model model, DefaultTrainingConfig config, ProcessGroup group) {
        model.setBlock(mlp(10));
        FullyShardedDataParallel t =
                FullyShardedDataParallel.builder()
                        .setModel(model)
                        .setTrainingConfig(config)
                        .setProcessGroup(group)
                        .optimizerSlice(16)
                        .build();
        t.initialize(new Shape(4, 6));
        return t;
    }

    private static void train(FullyShardedDataParallel t, NDManager manager, ProcessGroup group) {
        for (int s = 0; s < STEPS; s++) {
            Fixture.backward(t, Fixture.regression(manager, s, group.getRank()));
            t.step();
        }
    }

    private static List<String> ids(FullyShardedDataParallel t) {
        List<String> ids = new ArrayList<>();
        for (FlatUnit u : t.units()) {
            ids.addAll(t.optimizerIds(u));
        }
        return ids;
    }

    /** One optimizer id's state: its arrays (the very objects), their values, its update count. */
    private record Held(List<NDArray> arrays, List<float[]> values, int count) {}

    private static Map<String, Held> held(Optimizer opt, List<String> ids) {
        Map<String, Held> held = new LinkedHashMap<>();
        for (String id : ids) {
            List<NDArray> arrays = OptimizerState.arrays(opt, id);
            List<float[]> values = new ArrayList<>();
            for (NDArray a : arrays) {
                values.add(a.toFloatArray());
            }
            held.put(id, new Held(arrays, values, OptimizerState.counts(opt, id)[0]));
        }
        return held;
    }

    private static void assertUntouched(
            Map<String, Held> before, Map<String, Held> after, String when) {
        assertEquals(before.keySet(), after.keySet(), when);
        for (String id : before.keySet()) {
            Held b = before.get(id);
            Held a = after.get(id);
            String what = when + ", " + id;
            assertFalse(b.arrays().isEmpty(), what + ": state to compare");
            for (int k = 0; k < b.arrays().size(); k++) {
                assertFalse(b.arrays().get(k).isReleased(), what + ": state " + k + " closed");
            }
            assertEquals(b.arrays().size(), a.arrays().size(), what + ": state arrays");
            for (int k = 0; k < b.arrays().size(); k++) {
                assertSame(b.arrays().get(k), a.arrays().get(k), what + ": state " + k);
                assertArrayEquals(b.values().get(k), a.arrays().get(k).toFloatArray(), what);
            }
            assertEquals(b.count(), a.count(), what + ": update count");
        }
    }
}
