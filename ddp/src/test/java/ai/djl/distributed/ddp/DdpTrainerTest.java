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
package ai.djl.distributed.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.parallel.DataParallelConfig;
import ai.djl.distributed.parallel.RankAverages;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.BatchNorm;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.ParameterStore;
import ai.djl.training.evaluator.Accuracy;
import ai.djl.training.initializer.Initializer;
import ai.djl.training.listener.LoggingTrainingListener;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.listener.TrainingListener.BatchData;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The trainer's DDP behaviour beyond gradient averaging. */
@Timeout(60)
class DdpTrainerTest {

    private static final int BATCH = 4;

    /** A DDP trainer (initialized) of the fixture's MLP with its first layer frozen. */
    private static DistributedDataParallel firstLayerFrozen(
            Model model, SequentialBlock block, ProcessGroup group) {
        model.setBlock(block);
        block.getChildren().get(0).getValue().freezeParameters(true);
        return Fixture.ddp(model, group, BATCH);
    }

    private static Optimizer sgdWithDecay() {
        return Optimizer.sgd()
                .setLearningRateTracker(Tracker.fixed(0.1f))
                .optWeightDecays(0.5f)
                .build();
    }

    @Test
    void bucketsAreRebuiltOnceFromTheOrderParametersWereUsed() throws Exception {
        List<BucketAssignment[]> got =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                model.setBlock(new TwoPathBlock());
                                try (DistributedDataParallel t =
                                        Fixture.ddp(
                                                model,
                                                group,
                                                Fixture::sgd,
                                                DistributedDataParallel.builder()
                                                        .optFirstBucketBytes(64)
                                                        .optBucketCapBytes(256),
                                                BATCH)) {
                                    assertEquals(
                                            List.of(
                                                    "01late_weight",
                                                    "01late_bias",
                                                    "02early_weight",
                                                    "02early_bias",
                                                    "03spare_weight",
                                                    "03spare_bias"),
                                            t.getParameterNames());
                                    BucketAssignment initial = t.getBucketAssignment();
                                    Fixture.step(t, manager, 0, group.getRank(), BATCH);
                                    BucketAssignment first = t.getBucketAssignment();
                                    Fixture.step(t, manager, 1, group.getRank(), BATCH);
                                    return new BucketAssignment[] {
                                        initial, first, t.getBucketAssignment()
                                    };
                                }
                            }
                        });
        // sizes in bytes: late 256 + 16, early 512 + 64, spare 512 + 64
        long[] bytes = {256, 16, 512, 64, 512, 64};
        DataType[] types = new DataType[6];
        Arrays.fill(types, DataType.FLOAT32);
        BucketAssignment initial = BucketAssignment.initial(bytes, types, 64, 256);
        // forward used early (2, 3) then late (0, 1): ready order 1, 0, 3, 2; spare (unused) last
        BucketAssignment rebuilt =
                BucketAssignment.rebuilt(new int[] {1, 0, 3, 2}, bytes, types, 64, 256);
        assertFalse(initial.equals(rebuilt));
        for (BucketAssignment[] a : got) {
            assertEquals(initial, a[0]);
            assertEquals(rebuilt, a[1]);
            assertEquals(rebuilt, a[2], "rebuilt once only");
        }
        assertArrayEquals(new int[] {1, 0}, rebuilt.getBucket(0));
    }

    @Test
    void parametersNoRankUsedAreNotUpdatedWhenAskedToFindThem() throws Exception {
        List<Snapshots> got =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                model.setBlock(new TwoPathBlock());
                                try (DistributedDataParallel t =
                                        Fixture.ddp(
                                                model,
                                                group,
                                                DdpTrainerTest::sgdWithDecay,
                                                DistributedDataParallel.builder()
                                                        .optFindUnusedParameters(true),
                                                BATCH)) {
                                    Map<String, float[]> before =
                                            Fixture.snapshot(model.getBlock());
                                    Fixture.step(t, manager, 0, group.getRank(), BATCH);
                                    Fixture.step(t, manager, 1, group.getRank(), BATCH);
                                    return new Snapshots(
                                            before, Fixture.snapshot(model.getBlock()));
                                }
                            }
                        });
        for (Snapshots g : got) {
            assertArrayEquals(g.before().get("03spare_weight"), g.after().get("03spare_weight"));
            assertArrayEquals(g.before().get("03spare_bias"), g.after().get("03spare_bias"));
            assertFalse(
                    Arrays.equals(
                            g.before().get("02early_weight"), g.after().get("02early_weight")));
            Fixture.assertSame(got.get(0).after(), g.after());
        }
    }

    /** Parameters before and after training. */
    private record Snapshots(Map<String, float[]> before, Map<String, float[]> after) {}

    /**
     * Steps that do not communicate (one rank, or inside noSync) leave the parameters this rank did
     * not use out of the update too, as PyTorch's optimizer skips a parameter whose gradient was
     * never set: with weight decay, an update from a zero gradient would still move them.
     */
    @Test
    void unusedParametersAreNotUpdatedByStepsThatDoNotCommunicate() throws Exception {
        for (int ranks : new int[] {1, 2}) {
            List<Snapshots> got =
                    Ranks.run(
                            ranks,
                            (group, manager) -> {
                                try (Model model = Model.newInstance("ddp")) {
                                    model.setBlock(new TwoPathBlock());
                                    try (DistributedDataParallel t =
                                            Fixture.ddp(
                                                    model,
                                                    group,
                                                    DdpTrainerTest::sgdWithDecay,
                                                    DistributedDataParallel.builder()
                                                            .optFindUnusedParameters(true),
                                                    BATCH)) {
                                        Map<String, float[]> before =
                                                Fixture.snapshot(model.getBlock());
                                        NoSync scope = t.noSync();
                                        try {
                                            Fixture.step(t, manager, 0, group.getRank(), BATCH);
                                        } finally {
                                            scope.close();
                                        }
                                        return new Snapshots(
                                                before, Fixture.snapshot(model.getBlock()));
                                    }
                                }
                            });
            for (Snapshots g : got) {
                assertArrayEquals(
                        g.before().get("03spare_weight"),
                        g.after().get("03spare_weight"),
                        ranks + " ranks");
                assertArrayEquals(g.before().get("03spare_bias"), g.after().get("03spare_bias"));
                assertFalse(
                        Arrays.equals(
                                g.before().get("02early_weight"), g.after().get("02early_weight")));
            }
        }
    }

    @Test
    void buffersFollowRankZeroAfterEachStepUnlessTurnedOff() throws Exception {
        for (boolean broadcast : new boolean[] {true, false}) {
            List<float[]> means =
                    Ranks.run(
                            2,
                            (group, manager) -> {
                                try (Model model = Model.newInstance("bn")) {
                                    model.setBlock(
                                            new SequentialBlock()
                                                    .add(Linear.builder().setUnits(8).build())
                                                    .add(BatchNorm.builder().build())
                                                    .add(
                                                            Linear.builder()
                                                                    .setUnits(Fixture.CLASSES)
                                                                    .build()));
                                    try (DistributedDataParallel t =
                                            Fixture.ddp(
                                                    model,
                                                    group,
                                                    Fixture::sgd,
                                                    DistributedDataParallel.builder()
                                                            .optBroadcastBuffers(broadcast),
                                                    BATCH)) {
                                        Fixture.step(t, manager, 0, group.getRank(), BATCH);
                                        return model.getBlock()
                                                .getParameters()
                                                .get("02BatchNorm_runningMean")
                                                .getArray()
                                                .toFloatArray();
                                    }
                                }
                            });
            // the ranks saw different batches, so their running statistics differ until broadcast
            assertEquals(
                    broadcast, Arrays.equals(means.get(0), means.get(1)), "broadcast=" + broadcast);
        }
    }

    @Test
    void epochEvaluationsAreAveragedOverRanksWeightedBySamples() throws Exception {
        List<float[]> got =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            DefaultTrainingConfig config =
                                    Fixture.config(Fixture.sgd())
                                            .addEvaluator(new Accuracy())
                                            .addTrainingListeners(
                                                    TrainingListener.Defaults.basic());
                            try (Model model = Model.newInstance("ddp")) {
                                model.setBlock(Fixture.mlp());
                                try (DistributedDataParallel t =
                                        DistributedDataParallel.builder()
                                                .setModel(model)
                                                .setTrainingConfig(config)
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(BATCH, Fixture.IN));
                                    // rank 0: two batches all right; rank 1: one batch all wrong
                                    int batches = group.getRank() == 0 ? 2 : 1;
                                    for (int b = 0; b < batches; b++) {
                                        t.notifyListeners(
                                                l ->
                                                        l.onTrainingBatch(
                                                                t,
                                                                batch(
                                                                        manager,
                                                                        group.getRank() == 0)));
                                    }
                                    float local =
                                            t.getEvaluators().get(0).getAccumulator("train/epoch");
                                    t.notifyListeners(l -> l.onEpoch(t));
                                    Map<String, Float> ev = t.getTrainingResult().getEvaluations();
                                    return new float[] {
                                        local, ev.get("train_Accuracy"), ev.get("train_loss")
                                    };
                                }
                            }
                        });
        assertEquals(1f, got.get(0)[0]);
        assertEquals(0f, got.get(1)[0]);
        for (float[] g : got) {
            assertEquals(8f / 12f, g[1], 1e-6, "accuracy weighted by samples");
            assertEquals(got.get(0)[2], g[2], "the same averaged loss on every rank");
        }
        // Softmax cross-entropy of 4 logits, one of them 5: ln(1 + 3 e^-5) for a right sample,
        // ln(e^5 + 3) for a wrong one; DJL averages a loss per batch, and the ranks' values are
        // weighted by batches: rank 0's two right ones, rank 1's wrong one.
        double right = Math.log(1 + 3 * Math.exp(-5));
        double wrong = Math.log(Math.exp(5) + 3);
        assertEquals((2 * right + wrong) / 3, got.get(0)[2], 1e-5, "the averaged loss");
    }

    /** Labels 0..3 and logits picking them (right) or their neighbours (wrong). */
    private static BatchData batch(NDManager m, boolean right) {
        float[] logits = new float[BATCH * Fixture.CLASSES];
        for (int i = 0; i < BATCH; i++) {
            logits[i * Fixture.CLASSES + (right ? i : (i + 1) % Fixture.CLASSES)] = 5f;
        }
        NDArray labels = m.create(new float[] {0, 1, 2, 3});
        NDArray preds = m.create(logits, new Shape(BATCH, Fixture.CLASSES));
        return new BatchData(
                null,
                Map.of(Device.cpu(), new NDList(labels)),
                Map.of(Device.cpu(), new NDList(preds)));
    }

    @Test
    void listenersThatPrintOrWriteRunOnRankZeroOnly() {
        DefaultTrainingConfig config =
                Fixture.config(Fixture.sgd())
                        .addTrainingListeners(TrainingListener.Defaults.logging());
        for (int rank = 0; rank < 2; rank++) {
            List<TrainingListener> ls =
                    new DataParallelConfig(
                                    config, Device.cpu(), new RankAverages(null), rank, 2, t -> {})
                            .getTrainingListeners();
            long logging = ls.stream().filter(l -> l instanceof LoggingTrainingListener).count();
            // rank 0's logging listener is wrapped so that its progress bars count its share
            assertEquals(0, logging);
            // DDP's own listener first, then the evaluator and epoch listeners everywhere
            assertEquals(rank == 0 ? 5 : 4, ls.size());
        }
    }

    @Test
    void valuesAreAveragedAcrossRanksOnRequest() throws Exception {
        List<double[]> got =
                Ranks.run(
                        3,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                model.setBlock(Fixture.mlp());
                                try (DistributedDataParallel t = Fixture.ddp(model, group, BATCH)) {
                                    return t.averageAcrossRanks(group.getRank(), 10);
                                }
                            }
                        });
        for (double[] g : got) {
            assertArrayEquals(new double[] {1, 10}, g);
        }
    }

    /** What a rank got from evaluating: its predictions, and the loss averaged over the ranks. */
    private record Evaluation(float[] predictions, double meanLoss) {}

    /** An initializer drawing no random numbers whose values depend on {@code seed}. */
    private static Initializer seeded(int seed) {
        return (manager, shape, type) -> {
            float[] v = new float[(int) shape.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (0.3 * Math.sin(1.7 * i + shape.size() + 5 * seed));
            }
            return manager.create(v, shape).toType(type, false);
        };
    }

    /**
     * A model whose parameters each rank initialized itself (as a loaded or pretrained one, not
     * through the trainer), so that they differ, evaluated before any training: every rank
     * evaluates rank 0's model, as one process evaluating rank 0's model on each rank's batch does,
     * and the loss averaged over the ranks is that model's.
     */
    @Test
    void evaluatingBeforeTrainingEvaluatesRankZerosParameters() throws Exception {
        List<Evaluation> got =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                Block block = Fixture.mlp();
                                block.setInitializer(seeded(group.getRank()), p -> true);
                                block.initialize(
                                        model.getNDManager(),
                                        DataType.FLOAT32,
                                        new Shape(BATCH, Fixture.IN));
                                model.setBlock(block);
                                try (DistributedDataParallel t =
                                        DistributedDataParallel.builder()
                                                .setModel(model)
                                                .setTrainingConfig(Fixture.config(Fixture.sgd()))
                                                .setProcessGroup(group)
                                                .build()) {
                                    NDList[] b = Fixture.batch(manager, 0, group.getRank(), BATCH);
                                    NDList pred = t.evaluate(b[0]);
                                    float loss =
                                            Loss.softmaxCrossEntropyLoss()
                                                    .evaluate(b[1], pred)
                                                    .getFloat();
                                    return new Evaluation(
                                            pred.head().toFloatArray(),
                                            t.averageAcrossRanks(loss)[0]);
                                }
                            }
                        });
        try (Model model = Model.newInstance("reference");
                NDManager m = NDManager.newBaseManager(Device.cpu())) {
            Block block = Fixture.mlp();
            block.setInitializer(seeded(0), p -> true);
            block.initialize(model.getNDManager(), DataType.FLOAT32, new Shape(BATCH, Fixture.IN));
            ParameterStore ps = new ParameterStore(m, false);
            double sum = 0;
            for (int r = 0; r < 2; r++) {
                NDList[] b = Fixture.batch(m, 0, r, BATCH);
                NDList pred = block.forward(ps, b[0], false);
                assertArrayEquals(
                        pred.head().toFloatArray(), got.get(r).predictions(), "rank " + r);
                sum += Loss.softmaxCrossEntropyLoss().evaluate(b[1], pred).getFloat();
            }
            for (Evaluation e : got) {
                assertEquals(sum / 2, e.meanLoss(), 1e-6);
            }
        }
    }

    /**
     * A layer frozen before DDP synchronizes is left out of the buckets and kept as it is; one
     * frozen afterwards fails the next step, naming its parameter, on every rank.
     */
    @Test
    void freezingAfterSynchronizationFailsTheStepNamingTheParameter() throws Exception {
        List<String> got =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                SequentialBlock block = (SequentialBlock) Fixture.mlp();
                                try (DistributedDataParallel t =
                                        firstLayerFrozen(model, block, group)) {
                                    assertEquals(4, t.getParameterNames().size());
                                    Map<String, float[]> before = Fixture.snapshot(block);
                                    Fixture.step(t, manager, 0, group.getRank(), BATCH);
                                    Map<String, float[]> after = Fixture.snapshot(block);
                                    assertArrayEquals(
                                            before.get("01Linear_weight"),
                                            after.get("01Linear_weight"));
                                    assertFalse(
                                            Arrays.equals(
                                                    before.get("05Linear_weight"),
                                                    after.get("05Linear_weight")));
                                    block.getChildren().get(4).getValue().freezeParameters(true);
                                    IllegalStateException e =
                                            assertThrows(
                                                    IllegalStateException.class,
                                                    () ->
                                                            Fixture.step(
                                                                    t,
                                                                    manager,
                                                                    1,
                                                                    group.getRank(),
                                                                    BATCH));
                                    return e.getMessage();
                                }
                            }
                        });
        for (String message : got) {
            assertTrue(
                    message.startsWith("parameter 05Linear_weight was frozen after DDP"), message);
        }
    }

    /**
     * A float64 model with a parameter that gets no gradient (DJL hands out float32 zeros for it):
     * the bucket takes zeros of the parameter's type, and every rank ends with the same values.
     */
    @Test
    void aFloat64ModelWithAnUnusedParameterTrains() throws Exception {
        List<Map<String, double[]>> got =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                model.setDataType(DataType.FLOAT64);
                                model.setBlock(new TwoPathBlock());
                                try (DistributedDataParallel t = Fixture.ddp(model, group, BATCH)) {
                                    for (int s = 0; s < 2; s++) {
                                        try (NDManager m = manager.newSubManager()) {
                                            NDList[] b =
                                                    Fixture.batch(m, s, group.getRank(), BATCH);
                                            NDList[] b64 = {
                                                new NDList(
                                                        b[0].head()
                                                                .toType(DataType.FLOAT64, false)),
                                                b[1]
                                            };
                                            Fixture.backward(t, b64);
                                            t.step();
                                        }
                                    }
                                    Map<String, double[]> values = new TreeMap<>();
                                    for (var p : model.getBlock().getParameters()) {
                                        NDArray a = p.getValue().getArray();
                                        assertEquals(DataType.FLOAT64, a.getDataType());
                                        values.put(p.getKey(), a.toDoubleArray());
                                    }
                                    return values;
                                }
                            }
                        });
        for (String name : got.get(0).keySet()) {
            assertArrayEquals(got.get(0).get(name), got.get(1).get(name), name);
        }
    }

    @Test
    void aConfigWithoutALossIsRefusedByName() throws Exception {
        Ranks.run(
                1,
                (group, manager) -> {
                    try (Model model = Model.newInstance("ddp")) {
                        model.setBlock(Fixture.mlp());
                        IllegalArgumentException e =
                                assertThrows(
                                        IllegalArgumentException.class,
                                        () ->
                                                DistributedDataParallel.builder()
                                                        .setModel(model)
                                                        .setTrainingConfig(
                                                                new DefaultTrainingConfig(null))
                                                        .setProcessGroup(group)
                                                        .build());
                        assertTrue(
                                e.getMessage().startsWith("trainingConfig: no loss"),
                                e.getMessage());
                    }
                    return null;
                });
    }

    /**
     * A frozen layer is synchronized once, at the start, and not broadcast again after each step as
     * a buffer would be: a rank's own change to it after that stays.
     */
    @Test
    void frozenParametersAreNotRebroadcastEachStep() throws Exception {
        List<float[]> got =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                SequentialBlock block = (SequentialBlock) Fixture.mlp();
                                try (DistributedDataParallel t =
                                        firstLayerFrozen(model, block, group)) {
                                    NDArray bias =
                                            block.getChildren()
                                                    .get(0)
                                                    .getValue()
                                                    .getParameters()
                                                    .get("bias")
                                                    .getArray();
                                    // synchronized from rank 0 at initialize: zeros everywhere
                                    assertArrayEquals(new float[32], bias.toFloatArray());
                                    bias.addi(group.getRank());
                                    Fixture.step(t, manager, 0, group.getRank(), BATCH);
                                    return bias.toFloatArray();
                                }
                            }
                        });
        for (int r = 0; r < 2; r++) {
            float[] want = new float[32];
            Arrays.fill(want, r);
            assertArrayEquals(want, got.get(r), "rank " + r);
        }
    }
}
