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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.distributed.parallel.DistributedSampler;
import ai.djl.distributed.parallel.OptimizerState;
import ai.djl.distributed.pg.DeviceMesh;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.ParallelBlock;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.EasyTrain;
import ai.djl.training.Trainer;
import ai.djl.training.TrainingResult;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.initializer.Initializer;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What FSDP holds at rest, gradient accumulation, a model without a staged form, and the errors it
 * gives for what it cannot train.
 */
@Timeout(180)
class FsdpTrainerTest {

    /**
     * At rest each of three ranks holds its shard of every unit and nothing else: the parameters'
     * arrays add up to this rank's share of the real elements, the gradients and Adam's two moments
     * to one chunk per unit, counted from the arrays themselves and from unit sizes computed here
     * from the parameter names.
     */
    @Test
    void atRestEachRankHoldsOnlyItsShards() throws Exception {
        int ranks = 3;
        List<long[]> held =
                Fixture.ranks(
                        ranks,
                        (group, manager) -> {
                            Optimizer adam = Fixture.adamW();
                            try (Model model = Fixture.gptModel(0);
                                    FullyShardedDataParallel t =
                                            FullyShardedDataParallel.builder()
                                                    .setModel(model)
                                                    .setTrainingConfig(Fixture.config(adam))
                                                    .setProcessGroup(group)
                                                    .build()) {
                                Fixture.backward(t, Fixture.tokens(manager, 0, group.getRank(), 2));
                                t.step();
                                long params = 0;
                                for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
                                    params += p.getValue().getArray().size();
                                }
                                long grads = 0;
                                long state = 0;
                                for (FlatUnit u : t.units()) {
                                    grads += u.gradient().size();
                                    for (String id : t.optimizerIds(u)) {
                                        for (NDArray a : OptimizerState.arrays(adam, id)) {
                                            state += a.size();
                                        }
                                    }
                                }
                                FullyShardedDataParallel.MemoryAtRest mem = t.memoryAtRest();
                                return new long[] {
                                    params,
                                    grads,
                                    state,
                                    mem.parameters(),
                                    mem.gradients(),
                                    mem.optimizerState()
                                };
                            }
                        });
        // Units: one per block, the rest (embeddings, final LayerNorm) in the root unit.
        Map<String, Long> unitSizes = new LinkedHashMap<>();
        long total = 0;
        try (Model model = Fixture.gptModel(0)) {
            for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
                String key = p.getKey();
                String unit =
                        key.contains("block0")
                                ? "block0"
                                : key.contains("block1") ? "block1" : "root";
                unitSizes.merge(unit, p.getValue().getArray().size(), Long::sum);
                total += p.getValue().getArray().size();
            }
        }
        assertEquals(3, unitSizes.size());
        for (int r = 0; r < ranks; r++) {
            long real = 0;
            long chunks = 0;
            for (long size : unitSizes.values()) {
                long chunk = (size + ranks - 1) / ranks;
                chunks += chunk;
                real += Math.max(0, Math.min(chunk, size - r * chunk));
            }
            long[] h = held.get(r);
            assertEquals(real, h[0], "rank " + r + " parameter elements");
            assertEquals(chunks, h[1], "rank " + r + " gradient elements");
            assertEquals(2 * chunks, h[2], "rank " + r + " Adam state elements");
            assertEquals(4 * chunks, h[3]);
            assertEquals(4 * chunks, h[4]);
            assertEquals(8 * chunks, h[5]);
            // The target: at most 1/N + 5 % of what DDP holds (16 bytes per parameter).
            assertTrue(h[3] + h[4] + h[5] <= (1.0 / ranks + 0.05) * 16 * total);
        }
    }

    /**
     * Sharding holds the model's full parameters until every unit is built, so it must not hold
     * every unit's gradient beside them too: a unit's gradient exists only once a backward pass
     * reduced into it, and survives the step (zeroed, not freed) for the next.
     */
    @Test
    void gradientsAreAllocatedByTheFirstBackwardNotBySharding() throws Exception {
        List<boolean[]> seen =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            try (Model model = Fixture.gptModel(0);
                                    FullyShardedDataParallel t =
                                            Fixture.fsdp(
                                                    model,
                                                    group,
                                                    FullyShardedDataParallel.builder())) {
                                boolean atShard =
                                        t.units().stream().anyMatch(FlatUnit::hasGradient);
                                Fixture.backward(t, Fixture.tokens(manager, 0, group.getRank(), 2));
                                boolean afterBackward =
                                        t.units().stream().allMatch(FlatUnit::hasGradient);
                                t.step();
                                boolean zeroedAfterStep = true;
                                for (FlatUnit u : t.units()) {
                                    if (!u.hasGradient()) {
                                        zeroedAfterStep = false;
                                        continue;
                                    }
                                    try (NDArray a = u.gradient().abs();
                                            NDArray sum = a.sum()) {
                                        zeroedAfterStep &= sum.getFloat() == 0f;
                                    }
                                }
                                return new boolean[] {atShard, afterBackward, zeroedAfterStep};
                            }
                        });
        for (int r = 0; r < 2; r++) {
            assertFalse(seen.get(r)[0], "rank " + r + ": a gradient allocated by sharding");
            assertTrue(seen.get(r)[1], "rank " + r + ": a unit without a gradient after backward");
            assertTrue(seen.get(r)[2], "rank " + r + ": a gradient not zeroed by the step");
        }
    }

    /**
     * Two micro-batches per step on two ranks: the gradients add up until the step, as a plain
     * trainer's do over the concatenated micro-batches.
     */
    @Test
    void gradientsAccumulateOverMicroBatches() throws Exception {
        int ranks = 2;
        int steps = 2;
        Map<String, float[]> expected;
        try (Model model = Fixture.gptModel(0);
                Trainer t = model.newTrainer(Fixture.config(Fixture.adamW()));
                NDManager m = NDManager.newBaseManager()) {
            for (int s = 0; s < steps; s++) {
                for (int micro = 0; micro < 2; micro++) {
                    Fixture.backward(t, Fixture.concatenated(m, 2 * s + micro, ranks, 2));
                }
                t.step();
            }
            expected = Fixture.snapshot(model.getBlock());
        }
        List<Map<String, float[]>> runs =
                Fixture.ranks(
                        ranks,
                        (group, manager) -> {
                            try (Model model = Fixture.gptModel(0);
                                    FullyShardedDataParallel t =
                                            Fixture.fsdp(
                                                    model,
                                                    group,
                                                    FullyShardedDataParallel.builder())) {
                                for (int s = 0; s < steps; s++) {
                                    for (int micro = 0; micro < 2; micro++) {
                                        Fixture.backward(
                                                t,
                                                Fixture.tokens(
                                                        manager,
                                                        2 * s + micro,
                                                        group.getRank(),
                                                        2));
                                    }
                                    t.step();
                                }
                                Map<String, float[]> full = new LinkedHashMap<>();
                                t.forEachFullParameter((n, a) -> full.put(n, a.toFloatArray()));
                                return full;
                            }
                        });
        for (String name : expected.keySet()) {
            double err = Fixture.relativeError(runs.get(0).get(name), expected.get(name));
            assertTrue(err <= 1e-6, name + ": " + err);
        }
    }

    /** Two linear layers side by side, summed: a block with no staged form. */
    private static Block twoBranches() {
        Block b =
                new ParallelBlock(
                        list -> new NDList(list.get(0).singletonOrThrow().add(list.get(1).head())),
                        List.of(
                                Linear.builder().setUnits(3).build(),
                                Linear.builder().setUnits(3).build()));
        b.setInitializer(Fixture.deterministic(), p -> true);
        return b;
    }

    /**
     * A model with no staged form is gathered whole for each step: it trains as a plain trainer
     * does on the concatenated batches.
     */
    @Test
    void aModelWithoutAStagedFormTrainsGatheredWhole() throws Exception {
        int ranks = 2;
        Loss loss = Loss.l2Loss();
        Map<String, float[]> expected;
        try (Model model = Model.newInstance("two")) {
            model.setBlock(twoBranches());
            model.getBlock().initialize(model.getNDManager(), DataType.FLOAT32, new Shape(4, 5));
            try (Trainer t = model.newTrainer(Fixture.config(Fixture.adamW(), loss));
                    NDManager m = NDManager.newBaseManager()) {
                for (int s = 0; s < 3; s++) {
                    NDList[] parts = new NDList[ranks];
                    NDList data = new NDList();
                    NDList labels = new NDList();
                    for (int r = 0; r < ranks; r++) {
                        parts[r] = regression(m, s, r);
                        data.add(parts[r].get(0));
                        labels.add(parts[r].get(1));
                    }
                    Fixture.backward(
                            t,
                            new NDList[] {
                                new NDList(ai.djl.ndarray.NDArrays.concat(data)),
                                new NDList(ai.djl.ndarray.NDArrays.concat(labels))
                            });
                    t.step();
                }
                expected = Fixture.snapshot(model.getBlock());
            }
        }
        List<Object[]> runs =
                Fixture.ranks(
                        ranks,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("two")) {
                                model.setBlock(twoBranches());
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .setModel(model)
                                                .setTrainingConfig(
                                                        Fixture.config(Fixture.adamW(), loss))
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(4, 5));
                                    for (int s = 0; s < 3; s++) {
                                        NDList b = regression(manager, s, group.getRank());
                                        Fixture.backward(
                                                t,
                                                new NDList[] {
                                                    new NDList(b.get(0)), new NDList(b.get(1))
                                                });
                                        t.step();
                                    }
                                    Map<String, float[]> full = new LinkedHashMap<>();
                                    t.forEachFullParameter((n, a) -> full.put(n, a.toFloatArray()));
                                    return new Object[] {full, t.isStaged()};
                                }
                            }
                        });
        assertFalse((Boolean) runs.get(0)[1]);
        @SuppressWarnings("unchecked")
        Map<String, float[]> actual = (Map<String, float[]>) runs.get(0)[0];
        assertEquals(expected.keySet(), actual.keySet());
        for (String name : expected.keySet()) {
            double err = Fixture.relativeError(actual.get(name), expected.get(name));
            assertTrue(err <= 1e-6, name + ": " + err);
        }
    }

    private static NDList regression(NDManager m, int step, int rank) {
        float[] x = new float[4 * 5];
        float[] y = new float[4 * 3];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) Math.cos(0.7 * i + 3 * step + 11 * rank);
        }
        for (int i = 0; i < y.length; i++) {
            y[i] = (float) Math.sin(0.5 * i + step - rank);
        }
        return new NDList(m.create(x, new Shape(4, 5)), m.create(y, new Shape(4, 3)));
    }

    @Test
    void refusesWhatItCannotTrain() throws Exception {
        // A float64 model.
        List<String> messages =
                Fixture.ranks(
                        1,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("f64", "PyTorch")) {
                                model.setDataType(DataType.FLOAT64);
                                model.setBlock(Fixture.mlp());
                                try (FullyShardedDataParallel t =
                                        Fixture.fsdp(
                                                model, group, FullyShardedDataParallel.builder())) {
                                    IllegalArgumentException e =
                                            assertThrows(
                                                    IllegalArgumentException.class,
                                                    () -> t.initialize(new Shape(2, 6)));
                                    return e.getMessage();
                                }
                            }
                        });
        assertTrue(messages.get(0).contains("float64 (expected: float32"), messages.get(0));

        // HYBRID_SHARD without a mesh.
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                Fixture.ranks(
                                        1,
                                        (group, manager) -> {
                                            try (Model model = Fixture.gptModel(0)) {
                                                return Fixture.fsdp(
                                                        model,
                                                        group,
                                                        FullyShardedDataParallel.builder()
                                                                .optStrategy(
                                                                        ShardingStrategy
                                                                                .HYBRID_SHARD));
                                            }
                                        }));
        assertTrue(e.getMessage().contains("deviceMesh: none"), e.getMessage());
    }

    /**
     * The builder checks that the group is set before it reads it, and refuses a mesh that the
     * strategy would not use.
     */
    @Test
    void refusesAMissingGroupAndAMeshItWouldIgnore() throws Exception {
        try (Model model = Fixture.gptModel(0)) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    FullyShardedDataParallel.builder()
                                            .setModel(model)
                                            .setTrainingConfig(Fixture.config(Fixture.adamW()))
                                            .optStrategy(ShardingStrategy.HYBRID_SHARD)
                                            .build());
            assertTrue(e.getMessage().contains("processGroup"), e.getMessage());
        }
        List<String> messages =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            try (DeviceMesh mesh = DeviceMesh.create(group, 1, 2);
                                    Model model = Fixture.gptModel(0)) {
                                IllegalArgumentException e =
                                        assertThrows(
                                                IllegalArgumentException.class,
                                                () ->
                                                        Fixture.fsdp(
                                                                model,
                                                                group,
                                                                FullyShardedDataParallel.builder()
                                                                        .optStrategy(
                                                                                ShardingStrategy
                                                                                        .FULL_SHARD)
                                                                        .optDeviceMesh(mesh)));
                                return e.getMessage();
                            }
                        });
        for (String m : messages) {
            assertTrue(m.startsWith("deviceMesh: 1 x 2"), m);
            assertTrue(m.contains("FULL_SHARD"), m);
        }
    }

    /**
     * A consumer of {@code forEachFullParameter} that throws on rank 0 does not leave rank 1
     * waiting in the next unit's gather: rank 0 gathers the remaining units without calling the
     * consumer again and then throws the consumer's failure, rank 1 receives every parameter, and
     * both go on to gather again, in step, the model's initial values.
     */
    @Test
    void aConsumerFailingOnOneRankLeavesTheOthersInStep() throws Exception {
        Map<String, float[]> expected;
        try (Model model = Fixture.gptModel(0)) {
            expected = Fixture.snapshot(model.getBlock());
        }
        // A short group timeout: a rank left waiting fails in seconds rather than minutes.
        List<Map<String, float[]>> runs =
                MultiRank.run(
                        2,
                        Duration.ofSeconds(10),
                        (group, manager) -> {
                            try (Model model = Fixture.gptModel(0);
                                    FullyShardedDataParallel t =
                                            Fixture.fsdp(
                                                    model,
                                                    group,
                                                    FullyShardedDataParallel.builder())) {
                                Map<String, float[]> first = new LinkedHashMap<>();
                                if (group.getRank() == 0) {
                                    IllegalStateException e =
                                            assertThrows(
                                                    IllegalStateException.class,
                                                    () ->
                                                            t.forEachFullParameter(
                                                                    (n, a) -> {
                                                                        first.put(
                                                                                n,
                                                                                a.toFloatArray());
                                                                        throw new IllegalStateException(
                                                                                "consumer fails");
                                                                    }));
                                    assertEquals("consumer fails", e.getMessage());
                                    assertEquals(1, first.size(), "calls after the failure");
                                } else {
                                    t.forEachFullParameter(
                                            (n, a) -> first.put(n, a.toFloatArray()));
                                    assertEquals(expected.keySet(), first.keySet());
                                }
                                Map<String, float[]> again = new LinkedHashMap<>();
                                t.forEachFullParameter((n, a) -> again.put(n, a.toFloatArray()));
                                return again;
                            }
                        });
        for (Map<String, float[]> run : runs) {
            assertEquals(expected.keySet(), run.keySet());
            for (String name : expected.keySet()) {
                assertArrayEquals(expected.get(name), run.get(name), name);
            }
        }
    }

    /**
     * A unit that cannot be built (its shard too large to allocate: a parameter that is a broadcast
     * view of one element, 2^48 elements that take no memory until copied) leaves every parameter
     * whole: the units built before it are not swapped in, so the parameters keep their full shapes
     * and values, and a second attempt fails alike rather than sharding shards.
     */
    @Test
    void aUnitThatCannotBeBuiltLeavesTheParametersWhole() throws Exception {
        Initializer init =
                (m, shape, type) ->
                        shape.size() <= 1024
                                ? Fixture.deterministic().initialize(m, shape, type)
                                : m.zeros(new Shape(1), type).broadcast(shape);
        Fixture.ranks(
                1,
                (group, manager) -> {
                    Block block =
                            new SequentialBlock()
                                    .add(Linear.builder().setUnits(4).build())
                                    .add(Linear.builder().setUnits(1L << 46).build());
                    block.setInitializer(init, p -> true);
                    try (Model model = Model.newInstance("huge")) {
                        model.setBlock(block);
                        try (FullyShardedDataParallel t =
                                Fixture.fsdp(model, group, FullyShardedDataParallel.builder())) {
                            Shape input = new Shape(1, 2);
                            assertThrows(RuntimeException.class, () -> t.initialize(input));
                            assertThrows(RuntimeException.class, t::isStaged);
                            Parameter weight =
                                    block.getChildren()
                                            .get(0)
                                            .getValue()
                                            .getParameters()
                                            .get("weight");
                            Parameter bias =
                                    block.getChildren()
                                            .get(0)
                                            .getValue()
                                            .getParameters()
                                            .get("bias");
                            assertEquals(new Shape(4, 2), weight.getArray().getShape());
                            assertEquals(new Shape(4), bias.getArray().getShape());
                            try (NDManager m = NDManager.newBaseManager()) {
                                assertArrayEquals(
                                        init.initialize(m, new Shape(4, 2), DataType.FLOAT32)
                                                .toFloatArray(),
                                        weight.getArray().toFloatArray());
                            }
                            assertTrue(t.getUnitNames().isEmpty(), "units after the failure");
                        }
                    }
                    return null;
                });
    }

    /** Ranks whose units differ are refused, on every rank, before the first step. */
    @Test
    void mismatchedUnitsAreRefusedBeforeTheFirstStep() throws Exception {
        List<String> messages =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            WrapPolicy policy =
                                    group.getRank() == 0
                                            ? WrapPolicy.byParameterCount(100)
                                            : WrapPolicy.rootOnly();
                            try (Model model = Fixture.gptModel(0);
                                    FullyShardedDataParallel t =
                                            Fixture.fsdp(
                                                    model,
                                                    group,
                                                    FullyShardedDataParallel.builder()
                                                            .optWrapPolicy(policy))) {
                                IllegalStateException ex =
                                        assertThrows(
                                                IllegalStateException.class,
                                                () ->
                                                        t.forward(
                                                                Fixture.tokens(manager, 0, 0, 1)[
                                                                        0]));
                                return ex.getMessage();
                            }
                        });
        for (String m : messages) {
            assertTrue(m.contains("unit"), m);
        }
    }

    /**
     * Steps leave nothing behind: after the first two steps (the optimizer's state is created in
     * the first), the arrays the trainer's manager holds stay as many, with clipping on.
     */
    @Test
    void stepsLeaveNoArraysBehind() throws Exception {
        List<int[]> counts =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            try (Model model = Fixture.gptModel(0.1f);
                                    FullyShardedDataParallel t =
                                            Fixture.fsdp(
                                                    model,
                                                    group,
                                                    FullyShardedDataParallel.builder()
                                                            .optClipGradNorm(0.1))) {
                                int[] n = new int[2];
                                for (int s = 0; s < 8; s++) {
                                    try (NDManager sm = manager.newSubManager()) {
                                        Fixture.backward(
                                                t, Fixture.tokens(sm, s, group.getRank(), 2));
                                        t.step();
                                    }
                                    if (s == 1) {
                                        n[0] = t.getManager().getManagedArrays().size();
                                    }
                                }
                                n[1] = t.getManager().getManagedArrays().size();
                                return n;
                            }
                        });
        for (int[] n : counts) {
            assertEquals(n[0], n[1], "arrays after step 2 and after step 8");
        }
    }

    /**
     * {@code EasyTrain.fit} drives FSDP as it drives DJL's trainer: two ranks, each on its share of
     * the data through a {@link DistributedSampler}, two epochs with validation; the reported
     * losses are finite and averaged over the ranks (the same on both), and the ranks end with the
     * same parameters.
     */
    @Test
    void easyTrainFitTrainsWithFsdp() throws Exception {
        List<Object[]> runs =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            float[] x = new float[64 * 6];
                            float[] y = new float[64 * 5];
                            for (int i = 0; i < x.length; i++) {
                                x[i] = (float) Math.sin(0.37 * i);
                            }
                            for (int i = 0; i < y.length; i++) {
                                y[i] = (float) Math.cos(0.11 * i);
                            }
                            DistributedSampler sampler =
                                    DistributedSampler.builder()
                                            .setBatchSize(8)
                                            .setProcessGroup(group)
                                            .build();
                            ArrayDataset data =
                                    new ArrayDataset.Builder()
                                            .setData(manager.create(x, new Shape(64, 6)))
                                            .optLabels(manager.create(y, new Shape(64, 5)))
                                            .setSampling(sampler)
                                            .build();
                            try (Model model = Model.newInstance("mlp")) {
                                model.setBlock(Fixture.mlp());
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .setModel(model)
                                                .setTrainingConfig(
                                                        Fixture.config(
                                                                        Fixture.adamW(),
                                                                        Loss.l2Loss())
                                                                .addTrainingListeners(
                                                                        new EvaluatorTrainingListener()))
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(8, 6));
                                    EasyTrain.fit(t, 2, data, data);
                                    TrainingResult result = t.getTrainingResult();
                                    Map<String, float[]> full = new LinkedHashMap<>();
                                    t.forEachFullParameter((n, a) -> full.put(n, a.toFloatArray()));
                                    return new Object[] {
                                        result.getTrainLoss(), result.getValidateLoss(), full
                                    };
                                }
                            }
                        });
        float train = (Float) runs.get(0)[0];
        assertTrue(Float.isFinite(train) && train > 0, "train loss " + train);
        assertEquals(train, (Float) runs.get(1)[0], "the loss averaged over the ranks");
        assertEquals((Float) runs.get(0)[1], (Float) runs.get(1)[1]);
        @SuppressWarnings("unchecked")
        Map<String, float[]> a = (Map<String, float[]>) runs.get(0)[2];
        @SuppressWarnings("unchecked")
        Map<String, float[]> b = (Map<String, float[]>) runs.get(1)[2];
        for (String name : a.keySet()) {
            org.junit.jupiter.api.Assertions.assertArrayEquals(a.get(name), b.get(name), name);
        }
    }
}
