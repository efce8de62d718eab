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
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.training.ParameterStore;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the model holds once its FSDP trainer has closed: each rank's own copy of its parts of the
 * parameters (the whole model where a rank holds all of it), readable, saved and run without the
 * trainer, as a plain DJL trainer leaves its model usable.
 */
@Timeout(180)
class FsdpCloseTest {

    private static final int STEPS = 2;

    @TempDir Path dir;

    /** The MLP's parameters, their shapes and its output on the probe, after a plain trainer. */
    private record Trained(
            Map<String, float[]> params, Map<String, Shape> shapes, float[] output) {}

    /** What one rank read from the model after its trainer closed. */
    private record AfterClose(
            Map<String, long[]> ranges,
            Map<String, float[]> before,
            Map<String, float[]> after,
            Map<String, Shape> shapes,
            float[] output) {}

    private static NDList probe(NDManager m) {
        return new NDList(m.arange(24f).reshape(4, 6).div(24));
    }

    /** A plain DJL trainer on the ranks' concatenated batches: the independent reference. */
    private static Trained reference(int ranks) {
        try (Model model = Model.newInstance("mlp");
                NDManager m = NDManager.newBaseManager()) {
            model.setBlock(Fixture.mlp());
            model.getBlock().initialize(model.getNDManager(), DataType.FLOAT32, new Shape(4, 6));
            try (Trainer t = model.newTrainer(Fixture.config(Fixture.adamW(), Loss.l2Loss()))) {
                for (int s = 0; s < STEPS; s++) {
                    Fixture.backward(t, Fixture.concatenatedRegression(m, s, ranks));
                    t.step();
                }
            }
            float[] out =
                    model.getBlock()
                            .forward(new ParameterStore(m, false), probe(m), false)
                            .head()
                            .toFloatArray();
            Map<String, Shape> shapes = new LinkedHashMap<>();
            for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
                shapes.put(p.getKey(), p.getValue().getArray().getShape());
            }
            return new Trained(Fixture.snapshot(model.getBlock()), shapes, out);
        }
    }

    /**
     * Trains the MLP under FSDP, closes the trainer and reads the model: every parameter's array
     * and, where {@code run} is set, the model's output on the probe; saves the model too.
     */
    private List<AfterClose> trainAndClose(int ranks, ShardingStrategy strategy, boolean run)
            throws Exception {
        return Fixture.ranks(
                ranks,
                (group, manager) -> {
                    try (Model model = Model.newInstance("mlp")) {
                        Block block = Fixture.mlp();
                        model.setBlock(block);
                        Map<String, long[]> ranges = new LinkedHashMap<>();
                        Map<String, float[]> before = new LinkedHashMap<>();
                        try (FullyShardedDataParallel t =
                                FullyShardedDataParallel.builder()
                                        .setModel(model)
                                        .setTrainingConfig(
                                                Fixture.config(Fixture.adamW(), Loss.l2Loss()))
                                        .setProcessGroup(group)
                                        .optStrategy(strategy)
                                        .build()) {
                            t.initialize(new Shape(4, 6));
                            for (int s = 0; s < STEPS; s++) {
                                Fixture.backward(
                                        t, Fixture.regression(manager, s, group.getRank()));
                                t.step();
                            }
                            int shards = strategy == ShardingStrategy.NO_SHARD ? 1 : ranks;
                            int rank = shards == 1 ? 0 : group.getRank();
                            ranges.putAll(ranges(t, shards, rank));
                            for (Pair<String, Parameter> p : block.getParameters()) {
                                before.put(p.getKey(), p.getValue().getArray().toFloatArray());
                            }
                        }
                        Map<String, float[]> after = new LinkedHashMap<>();
                        Map<String, Shape> shapes = new LinkedHashMap<>();
                        for (Pair<String, Parameter> p : block.getParameters()) {
                            NDArray a = p.getValue().getArray();
                            assertFalse(a.isReleased(), p.getKey());
                            shapes.put(p.getKey(), a.getShape());
                            after.put(p.getKey(), a.toFloatArray());
                        }
                        Path saved = dir.resolve("rank" + group.getRank());
                        Files.createDirectories(saved);
                        model.save(saved, "mlp");
                        assertTrue(Files.exists(saved.resolve("mlp-0000.params")));
                        float[] out = null;
                        if (run) {
                            out =
                                    block.forward(
                                                    new ParameterStore(manager, false),
                                                    probe(manager),
                                                    false)
                                            .head()
                                            .toFloatArray();
                        }
                        return new AfterClose(ranges, before, after, shapes, out);
                    }
                });
    }

    /**
     * Each parameter's range {@code [from, to)} within it that this rank holds, computed here from
     * the units' parameter sizes: each unit flattened in order, padded to {@code shards} equal
     * chunks, this rank keeping chunk {@code rank}.
     */
    private static Map<String, long[]> ranges(FullyShardedDataParallel t, int shards, int rank) {
        Map<String, long[]> ranges = new LinkedHashMap<>();
        for (FlatUnit u : t.units()) {
            List<Parameter> params = u.spec().parameters();
            long total = 0;
            for (Parameter p : params) {
                total += p.getShape().size();
            }
            long chunk = (total + shards - 1) / shards;
            long lo = rank * chunk;
            long offset = 0;
            for (int i = 0; i < params.size(); i++) {
                long n = params.get(i).getShape().size();
                long from = Math.min(n, Math.max(0, lo - offset));
                long to = Math.min(n, Math.max(from, lo + chunk - offset));
                ranges.put(u.spec().names().get(i), new long[] {from, to});
                offset += n;
            }
        }
        return ranges;
    }

    @Test
    void aClosedTrainerLeavesEachParameterThisRanksPart() throws Exception {
        int ranks = 2;
        Trained expected = reference(ranks);
        List<AfterClose> runs = trainAndClose(ranks, ShardingStrategy.FULL_SHARD, false);
        for (String name : expected.params().keySet()) {
            float[] full = expected.params().get(name);
            long covered = 0;
            for (int r = 0; r < ranks; r++) {
                AfterClose run = runs.get(r);
                long[] range = run.ranges().get(name);
                int n = (int) (range[1] - range[0]);
                String what = "rank " + r + ", " + name;
                assertEquals(new Shape(n), run.shapes().get(name), what);
                // The copy holds exactly what the rank held at rest...
                assertArrayEquals(run.before().get(name), run.after().get(name), what);
                // ...which is its part of the trained parameter.
                float[] part = new float[n];
                System.arraycopy(full, (int) range[0], part, 0, n);
                double err = Fixture.relativeError(run.after().get(name), part);
                assertTrue(err <= 1e-5, what + ": " + err);
                covered += n;
            }
            assertEquals(full.length, covered, name + ": the ranks' parts make it whole");
        }
    }

    @Test
    void aClosedTrainerThatHeldEverythingLeavesAWholeModel() throws Exception {
        // A shard group of one: no sharding at two ranks, and any strategy at one rank.
        for (int ranks : new int[] {1, 2}) {
            ShardingStrategy strategy =
                    ranks == 1 ? ShardingStrategy.FULL_SHARD : ShardingStrategy.NO_SHARD;
            Trained expected = reference(ranks);
            for (AfterClose run : trainAndClose(ranks, strategy, true)) {
                for (Map.Entry<String, float[]> e : expected.params().entrySet()) {
                    String what = ranks + " ranks, " + e.getKey();
                    assertEquals(expected.shapes().get(e.getKey()), run.shapes().get(e.getKey()));
                    assertArrayEquals(run.before().get(e.getKey()), run.after().get(e.getKey()));
                    double err = Fixture.relativeError(run.after().get(e.getKey()), e.getValue());
                    assertTrue(err <= 1e-5, what + ": " + err);
                }
                double err = Fixture.relativeError(run.output(), expected.output());
                assertTrue(err <= 1e-5, ranks + " ranks, output: " + err);
            }
        }
    }
}
