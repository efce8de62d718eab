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
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.distributed.pg.DeviceMesh;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Parameter;
import ai.djl.training.Trainer;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * FSDP trains as single-process DJL would: with one rank, bit for bit what a plain DJL trainer
 * gives; with two and three ranks (uneven padding), every strategy, AdamW with weight decay and
 * global-norm clipping, the parameters after K steps equal those of a plain trainer on the ranks'
 * concatenated batches, within 1e-6 relative, and every rank ends with the same parameters.
 */
@Timeout(300)
class FsdpEquivalenceTest {

    private static final int STEPS = 3;
    private static final int BATCH = 2;
    private static final double MAX_NORM = 0.1;

    /** The reference: a plain DJL trainer on the concatenated batches, clipped as PyTorch does. */
    private static Map<String, float[]> reference(int ranks, double maxNorm, double[] norms) {
        try (Model model = Fixture.gptModel(0);
                Trainer t = model.newTrainer(Fixture.config(Fixture.adamW()));
                NDManager m = NDManager.newBaseManager()) {
            for (int s = 0; s < STEPS; s++) {
                try (NDManager sm = m.newSubManager()) {
                    Fixture.backward(t, Fixture.concatenated(sm, s, ranks, BATCH));
                    if (maxNorm > 0) {
                        double sq = 0;
                        for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
                            for (float g : p.getValue().getArray().getGradient().toFloatArray()) {
                                sq += (double) g * g;
                            }
                        }
                        double norm = Math.sqrt(sq);
                        norms[s] = norm;
                        double coef = maxNorm / (norm + 1e-6);
                        if (coef < 1) {
                            for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
                                p.getValue().getArray().getGradient().muli((float) coef);
                            }
                        }
                    }
                    t.step();
                }
            }
            return Fixture.snapshot(model.getBlock());
        }
    }

    private static List<Map<String, float[]>> train(
            int ranks, ShardingStrategy strategy, double maxNorm, int meshRows) throws Exception {
        return train(ranks, strategy, maxNorm, meshRows, false);
    }

    private static List<Map<String, float[]>> train(
            int ranks, ShardingStrategy strategy, double maxNorm, int meshRows, boolean recompute)
            throws Exception {
        return Fixture.ranks(
                ranks,
                (group, manager) -> {
                    DeviceMesh mesh =
                            strategy == ShardingStrategy.HYBRID_SHARD
                                    ? DeviceMesh.create(group, meshRows, ranks / meshRows)
                                    : null;
                    // Small optimizer ranges: several per unit, as large models have.
                    FullyShardedDataParallel.Builder b =
                            FullyShardedDataParallel.builder()
                                    .optStrategy(strategy)
                                    .optActivationCheckpointing(recompute)
                                    .optimizerSlice(1000);
                    if (maxNorm > 0) {
                        b.optClipGradNorm(maxNorm);
                    }
                    if (mesh != null) {
                        b.optDeviceMesh(mesh);
                    }
                    try (Model model = Fixture.gptModel(0);
                            FullyShardedDataParallel t = Fixture.fsdp(model, group, b)) {
                        for (int s = 0; s < STEPS; s++) {
                            try (NDManager sm = manager.newSubManager()) {
                                Fixture.backward(t, Fixture.tokens(sm, s, group.getRank(), BATCH));
                                t.step();
                            }
                        }
                        Map<String, float[]> full = new LinkedHashMap<>();
                        t.forEachFullParameter((n, a) -> full.put(n, a.toFloatArray()));
                        return full;
                    } finally {
                        if (mesh != null) {
                            mesh.close();
                        }
                    }
                });
    }

    @ParameterizedTest
    @EnumSource(
            value = ShardingStrategy.class,
            names = {"FULL_SHARD", "SHARD_GRAD_OP", "NO_SHARD"})
    void oneRankIsBitIdenticalToAPlainTrainer(ShardingStrategy strategy) throws Exception {
        Map<String, float[]> expected = reference(1, 0, new double[STEPS]);
        Map<String, float[]> actual = train(1, strategy, 0, 1).get(0);
        assertEquals(expected.keySet(), actual.keySet());
        for (String name : expected.keySet()) {
            assertArrayEquals(expected.get(name), actual.get(name), name);
        }
    }

    @ParameterizedTest
    @EnumSource(ShardingStrategy.class)
    void twoAndThreeRanksEqualOneProcessOnTheConcatenatedBatches(ShardingStrategy strategy)
            throws Exception {
        twoAndThreeRanks(strategy, false);
    }

    /** The same with activation checkpointing: each unit's forward recomputed for its backward. */
    @ParameterizedTest
    @EnumSource(
            value = ShardingStrategy.class,
            names = {"FULL_SHARD", "SHARD_GRAD_OP"})
    void withRecomputeTwoAndThreeRanksEqualOneProcessToo(ShardingStrategy strategy)
            throws Exception {
        twoAndThreeRanks(strategy, true);
    }

    private static void twoAndThreeRanks(ShardingStrategy strategy, boolean recompute)
            throws Exception {
        for (int ranks :
                strategy == ShardingStrategy.HYBRID_SHARD ? new int[] {2, 4} : new int[] {2, 3}) {
            double[] norms = new double[STEPS];
            Map<String, float[]> expected = reference(ranks, MAX_NORM, norms);
            // The bound is below the norm, so clipping changes the result.
            assertTrue(norms[0] > MAX_NORM, "norm " + norms[0]);
            List<Map<String, float[]>> runs = train(ranks, strategy, MAX_NORM, 2, recompute);
            for (String name : expected.keySet()) {
                double err = Fixture.relativeError(runs.get(0).get(name), expected.get(name));
                assertTrue(err <= 1e-6, ranks + " ranks, " + name + ": " + err);
                for (int r = 1; r < ranks; r++) {
                    assertArrayEquals(runs.get(0).get(name), runs.get(r).get(name), name);
                }
            }
        }
    }
}
