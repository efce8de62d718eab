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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Block;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * K steps of N-rank DDP end with the parameters of single-process training on the ranks'
 * concatenated batches, with the same optimizer (SGD with momentum and weight decay), to 1e-5
 * relative; every rank ends with the same parameters, bit for bit.
 */
@Timeout(120)
class DdpEquivalenceTest {

    private static final int STEPS = 4;
    private static final int BATCH = 4;

    /** What a rank reports: its initial parameters (after the broadcast) and its final ones. */
    private record Run(Map<String, float[]> initial, Map<String, float[]> last, int buckets) {}

    private static List<Run> train(int ranks, long firstBucketBytes, long capBytes, int micro)
            throws Exception {
        return train(ranks, firstBucketBytes, capBytes, micro, false);
    }

    private static List<Run> train(
            int ranks, long firstBucketBytes, long capBytes, int micro, boolean overlap)
            throws Exception {
        return Ranks.run(
                ranks,
                (group, manager) -> {
                    try (Model model = Model.newInstance("ddp")) {
                        model.setBlock(Fixture.mlp());
                        try (DistributedDataParallel t =
                                Fixture.ddp(
                                        model,
                                        group,
                                        Fixture::sgd,
                                        DistributedDataParallel.builder()
                                                .optFirstBucketBytes(firstBucketBytes)
                                                .optBucketCapBytes(capBytes)
                                                .optOverlapWithForward(overlap),
                                        BATCH)) {
                            Map<String, float[]> initial = Fixture.snapshot(model.getBlock());
                            int buckets = t.getBucketAssignment().size();
                            for (int s = 0; s < STEPS; s++) {
                                try (NDManager m = manager.newSubManager()) {
                                    // micro-batches of one step: gradients add up until step()
                                    for (int k = 0; k < micro; k++) {
                                        Fixture.backward(
                                                t,
                                                Fixture.batch(
                                                        m, s * micro + k, group.getRank(), BATCH));
                                    }
                                    t.step();
                                    if (overlap && s > 0) {
                                        // the reductions are still pending; a forward pass
                                        // (unlocked: no gradient collector) completes them
                                        // bucket by bucket as it fetches the parameters
                                        assertTrue(t.hasPendingUpdates());
                                        t.evaluate(Fixture.batch(m, 0, 0, BATCH)[0]);
                                        assertFalse(t.hasPendingUpdates());
                                    }
                                }
                            }
                            return new Run(initial, Fixture.snapshot(model.getBlock()), buckets);
                        }
                    }
                });
    }

    private static void assertAllRanksMatchReference(List<Run> runs, int ranks) {
        for (Run r : runs) {
            // the broadcast: every rank started from rank 0's parameters
            Fixture.assertSame(runs.get(0).initial(), r.initial());
            Fixture.assertSame(runs.get(0).last(), r.last());
        }
        Map<String, float[]> expected =
                Fixture.reference(runs.get(0).initial(), Fixture.sgd(), STEPS, ranks, BATCH);
        Fixture.assertClose(expected, runs.get(0).last(), 1e-5);
        // and training moved the parameters well beyond that tolerance
        float[] before = runs.get(0).initial().get("01Linear_weight");
        float[] after = runs.get(0).last().get("01Linear_weight");
        assertFalse(Arrays.equals(before, after));
    }

    @Test
    void twoRanksWithManySmallBucketsMatchSingleProcessTraining() throws Exception {
        // 256-byte first bucket, 1 KiB cap: the 884-float model spans 3 buckets
        List<Run> runs = train(2, 256, 1024, 1);
        assertEquals(3, runs.get(0).buckets(), "buckets: " + runs.get(0).buckets());
        assertAllRanksMatchReference(runs, 2);
    }

    @Test
    void reductionsOverlappingTheNextForwardPassGiveTheSameParameters() throws Exception {
        List<Run> runs = train(2, 256, 1024, 1, true);
        assertAllRanksMatchReference(runs, 2);
    }

    @Test
    void threeRanksWithDefaultBucketsMatchSingleProcessTraining() throws Exception {
        List<Run> runs =
                train(
                        3,
                        BucketAssignment.DEFAULT_FIRST_BUCKET_BYTES,
                        BucketAssignment.DEFAULT_BUCKET_CAP_BYTES,
                        1);
        assertEquals(1, runs.get(0).buckets());
        assertAllRanksMatchReference(runs, 3);
    }

    @Test
    void gradientsAccumulatedOverMicroBatchesAreReducedOnceAtStep() throws Exception {
        List<Run> runs = train(2, 256, 1024, 2);
        for (Run r : runs) {
            Fixture.assertSame(runs.get(0).last(), r.last());
        }
        // Reference: the same micro-batches, each the ranks' concatenation, summed, one step.
        Map<String, float[]> expected = referenceWithMicroBatches(runs.get(0).initial(), 2, 2);
        Fixture.assertClose(expected, runs.get(0).last(), 1e-5);
    }

    private static Map<String, float[]> referenceWithMicroBatches(
            Map<String, float[]> initial, int ranks, int micro) {
        try (Model model = Model.newInstance("reference");
                NDManager manager = NDManager.newBaseManager()) {
            model.setBlock(Fixture.mlp());
            try (ai.djl.training.Trainer trainer =
                    model.newTrainer(Fixture.config(Fixture.sgd()))) {
                trainer.initialize(new ai.djl.ndarray.types.Shape(ranks * BATCH, Fixture.IN));
                Fixture.load(model.getBlock(), initial, manager);
                for (int s = 0; s < STEPS; s++) {
                    try (NDManager m = manager.newSubManager()) {
                        for (int k = 0; k < micro; k++) {
                            Fixture.backward(
                                    trainer, Fixture.concatenated(m, s * micro + k, ranks, BATCH));
                        }
                        trainer.step();
                    }
                }
            }
            return Fixture.snapshot(model.getBlock());
        }
    }

    @Test
    void stepsInsideNoSyncUpdateFromLocalGradientsOnly() throws Exception {
        List<Run> runs =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                model.setBlock(Fixture.mlp());
                                try (DistributedDataParallel t = Fixture.ddp(model, group, BATCH)) {
                                    Map<String, float[]> initial =
                                            Fixture.snapshot(model.getBlock());
                                    NoSync scope = t.noSync();
                                    try {
                                        assertFalse(t.isSyncEnabled());
                                        Fixture.step(t, manager, 0, group.getRank(), BATCH);
                                    } finally {
                                        scope.close();
                                    }
                                    assertTrue(t.isSyncEnabled());
                                    return new Run(initial, Fixture.snapshot(model.getBlock()), 0);
                                }
                            }
                        });
        // each rank took a step on its own batch: rank 0's equals single-process on its batch alone
        Map<String, float[]> expected =
                Fixture.reference(runs.get(0).initial(), Fixture.sgd(), 1, 1, BATCH);
        Fixture.assertClose(expected, runs.get(0).last(), 1e-6);
        assertFalse(
                Arrays.equals(
                        runs.get(0).last().get("01Linear_weight"),
                        runs.get(1).last().get("01Linear_weight")));
    }

    @Test
    void theModelsMustMatchAcrossRanks() {
        Exception e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        IllegalStateException.class,
                        () ->
                                Ranks.run(
                                        2,
                                        (group, manager) -> {
                                            try (Model model = Model.newInstance("ddp")) {
                                                Block b =
                                                        group.getRank() == 0
                                                                ? Fixture.mlp()
                                                                : new ai.djl.nn.SequentialBlock()
                                                                        .add(
                                                                                ai.djl.nn.core
                                                                                        .Linear
                                                                                        .builder()
                                                                                        .setUnits(3)
                                                                                        .build());
                                                model.setBlock(b);
                                                Fixture.ddp(model, group, BATCH).close();
                                                return null;
                                            }
                                        }));
        assertTrue(e.getMessage().contains("rank 1's parameter"), e.getMessage());
    }
}
