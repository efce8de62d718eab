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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.distributed.parallel.OptimizerState;
import ai.djl.distributed.transformer.GptModel;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.ParameterStore;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;

/** FSDP's full and sharded checkpoints. */
@Timeout(180)
class FsdpCheckpointTest {

    @TempDir Path dir;

    /** What one rank's run produced. */
    private record Run(Map<String, float[]> params, float[] logits, float[][] state) {}

    /**
     * Trains {@code steps} steps from step {@code from} on {@code ranks} ranks, optionally loading
     * a sharded checkpoint or a full one first, and saving a sharded one after.
     */
    private static List<Run> run(
            int ranks,
            Supplier<Optimizer> optimizer,
            int from,
            int steps,
            Path loadSharded,
            Path loadFull,
            Path saveSharded,
            Path saveFull)
            throws Exception {
        // Optimizer ranges that differ with the world size: 600 elements at three ranks, 900 at
        // two, so that resharding moves state across them.
        long slice = ranks == 3 ? 600 : 900;
        return Fixture.ranks(
                ranks,
                (group, manager) -> {
                    Optimizer opt = optimizer.get();
                    try (Model model = Fixture.gptModel(0)) {
                        if (loadFull != null) {
                            model.load(loadFull, "gpt");
                        }
                        try (FullyShardedDataParallel t =
                                FullyShardedDataParallel.builder()
                                        .optimizerSlice(slice)
                                        .setModel(model)
                                        .setTrainingConfig(Fixture.config(opt))
                                        .setProcessGroup(group)
                                        .build()) {
                            if (loadSharded != null) {
                                FsdpCheckpoint.loadSharded(t, loadSharded);
                            }
                            for (int s = from; s < from + steps; s++) {
                                Fixture.backward(t, Fixture.tokens(manager, s, group.getRank(), 2));
                                t.step();
                            }
                            if (saveSharded != null) {
                                FsdpCheckpoint.saveSharded(t, saveSharded);
                            }
                            if (saveFull != null) {
                                FsdpCheckpoint.saveFull(t, saveFull, "gpt");
                            }
                            Map<String, float[]> full = new LinkedHashMap<>();
                            t.forEachFullParameter((n, a) -> full.put(n, a.toFloatArray()));
                            NDArray logits =
                                    t.evaluate(Fixture.tokens(manager, 99, 0, 2)[0]).head();
                            List<FlatUnit> units = t.units();
                            float[][] state = new float[units.size()][];
                            for (int u = 0; u < units.size(); u++) {
                                // Adam's first moment over the shard's ranges, in order.
                                List<Float> m1 = new ArrayList<>();
                                for (String id : t.optimizerIds(units.get(u))) {
                                    List<NDArray> s = OptimizerState.arrays(opt, id);
                                    if (!s.isEmpty()) {
                                        for (float v : s.get(0).toFloatArray()) {
                                            m1.add(v);
                                        }
                                    }
                                }
                                state[u] = new float[m1.size()];
                                for (int i = 0; i < state[u].length; i++) {
                                    state[u][i] = m1.get(i);
                                }
                            }
                            return new Run(full, logits.toFloatArray(), state);
                        }
                    }
                });
    }

    private static Optimizer sgd() {
        return Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.05f)).build();
    }

    @Test
    void aShardedCheckpointResumesBitForBitAtTheSameWorldSize() throws Exception {
        Run straight = run(3, Fixture::adamW, 0, 4, null, null, null, null).get(0);
        run(3, Fixture::adamW, 0, 2, null, null, dir, null);
        Run resumed = run(3, Fixture::adamW, 2, 2, dir, null, null, null).get(0);
        for (String name : straight.params().keySet()) {
            assertArrayEquals(straight.params().get(name), resumed.params().get(name), name);
        }
    }

    @Test
    void aShardedCheckpointLoadsAtAnotherWorldSize() throws Exception {
        // Saved at three ranks, loaded at two: the same as two ranks starting from the full
        // checkpoint of the same state (SGD without momentum: the full checkpoint holds it all).
        Path sharded = dir.resolve("sharded");
        Path full = dir.resolve("full");
        run(3, FsdpCheckpointTest::sgd, 0, 2, null, null, sharded, full);
        assertTrue(Files.exists(full.resolve("gpt-0000.params")));
        Run fromShards = run(2, FsdpCheckpointTest::sgd, 2, 2, sharded, null, null, null).get(0);
        Run fromFull = run(2, FsdpCheckpointTest::sgd, 2, 2, null, full, null, null).get(0);
        for (String name : fromFull.params().keySet()) {
            assertArrayEquals(fromFull.params().get(name), fromShards.params().get(name), name);
        }

        // Adam's moments are resharded: at two ranks each holds its range of what three held.
        Path adam = dir.resolve("adam");
        List<Run> three = run(3, Fixture::adamW, 0, 2, null, null, adam, null);
        List<Run> two = run(2, Fixture::adamW, 2, 0, adam, null, null, null);
        for (int u = 0; u < three.get(0).state().length; u++) {
            float[] whole3 = concat(three, u);
            float[] whole2 = concat(two, u);
            int n = Math.min(whole3.length, whole2.length);
            for (int i = 0; i < n; i++) {
                assertEquals(whole3[i], whole2[i], "unit " + u + " element " + i);
            }
            // Past the unit's end both are padding: zeros.
            for (int i = n; i < Math.max(whole3.length, whole2.length); i++) {
                assertEquals(0f, (whole3.length > i ? whole3 : whole2)[i]);
            }
        }
    }

    private static float[] concat(List<Run> runs, int unit) {
        int n = 0;
        for (Run r : runs) {
            n += r.state()[unit].length;
        }
        float[] all = new float[n];
        int at = 0;
        for (Run r : runs) {
            System.arraycopy(r.state()[unit], 0, all, at, r.state()[unit].length);
            at += r.state()[unit].length;
        }
        return all;
    }

    @Test
    void aFullCheckpointLoadsIntoAPlainModel() throws Exception {
        Run trained = run(2, Fixture::adamW, 0, 2, null, null, null, dir).get(0);
        try (Model plain = Model.newInstance("gpt");
                NDManager m = NDManager.newBaseManager()) {
            plain.setBlock(new GptModel(Fixture.gpt(0)));
            plain.load(dir, "gpt");
            Map<String, float[]> loaded = Fixture.snapshot(plain.getBlock());
            assertEquals(trained.params().keySet(), loaded.keySet());
            for (String name : loaded.keySet()) {
                assertArrayEquals(trained.params().get(name), loaded.get(name), name);
            }
            NDList tokens = Fixture.tokens(m, 99, 0, 2)[0];
            float[] logits =
                    plain.getBlock()
                            .forward(new ParameterStore(m, false), tokens, false)
                            .head()
                            .toFloatArray();
            assertTrue(Fixture.relativeError(trained.logits(), logits) < 1e-6);
        }
    }

    /**
     * Linear(4 -> 1) under FSDP at {@code ranks} ranks with SGD: one unit of 5 elements, so that at
     * four ranks (chunks of 2) the last rank's range is all padding. Loads a sharded checkpoint
     * first and saves one after {@code steps} steps when given; returns rank 0's full parameters.
     */
    private static Map<String, float[]> linear(int ranks, int steps, Path load, Path save)
            throws Exception {
        return Fixture.ranks(
                        ranks,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("linear")) {
                                Block block =
                                        new SequentialBlock()
                                                .add(Linear.builder().setUnits(1).build());
                                block.setInitializer(Fixture.deterministic(), p -> true);
                                model.setBlock(block);
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .setModel(model)
                                                .setTrainingConfig(
                                                        Fixture.config(sgd(), Loss.l2Loss()))
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(2, 4));
                                    if (load != null) {
                                        FsdpCheckpoint.loadSharded(t, load);
                                    }
                                    for (int s = 0; s < steps; s++) {
                                        float[] x = new float[8];
                                        for (int i = 0; i < x.length; i++) {
                                            x[i] = (float) Math.cos(0.7 * i + s + group.getRank());
                                        }
                                        NDArray in = manager.create(x, new Shape(2, 4));
                                        NDArray out =
                                                manager.create(
                                                        new float[] {1, -1}, new Shape(2, 1));
                                        Fixture.backward(
                                                t, new NDList[] {new NDList(in), new NDList(out)});
                                        t.step();
                                    }
                                    if (save != null) {
                                        FsdpCheckpoint.saveSharded(t, save);
                                    }
                                    Map<String, float[]> full = new LinkedHashMap<>();
                                    t.forEachFullParameter((n, a) -> full.put(n, a.toFloatArray()));
                                    return full;
                                }
                            }
                        })
                .get(0);
    }

    @Test
    void aRankWhoseRangeIsAllPaddingSavesAndLoads() throws Exception {
        Map<String, float[]> initial = linear(4, 0, null, null);
        Map<String, float[]> trained = linear(4, 2, null, dir);
        // Written under temporary names and renamed: only the four shard files are left.
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(4, files.filter(p -> p.toString().endsWith(".bin")).count());
        }
        try (Stream<Path> files = Files.list(dir)) {
            assertEquals(4, files.count());
        }
        assertTrue(
                trained.keySet().stream()
                        .anyMatch(n -> !Arrays.equals(initial.get(n), trained.get(n))),
                "two steps changed the parameters");
        for (int ranks : new int[] {4, 2}) {
            Map<String, float[]> loaded = linear(ranks, 0, dir, null);
            assertEquals(trained.keySet(), loaded.keySet());
            for (String name : trained.keySet()) {
                assertArrayEquals(trained.get(name), loaded.get(name), ranks + " ranks: " + name);
            }
        }
    }

    /**
     * Loads at {@code ranks} ranks into a fresh trainer with AdamW, expecting an IOException, and
     * checks that the failed load changed neither the parameters nor the optimizer (still without
     * state, as before its first step). Returns rank 0's message.
     */
    private static String loadFails(int ranks, Path from) throws Exception {
        return Fixture.ranks(
                        ranks,
                        (group, manager) -> {
                            Optimizer opt = Fixture.adamW();
                            try (Model model = Fixture.gptModel(0);
                                    FullyShardedDataParallel t =
                                            FullyShardedDataParallel.builder()
                                                    .setModel(model)
                                                    .setTrainingConfig(Fixture.config(opt))
                                                    .setProcessGroup(group)
                                                    .build()) {
                                Map<String, float[]> before = new LinkedHashMap<>();
                                t.forEachFullParameter((n, a) -> before.put(n, a.toFloatArray()));
                                IOException e =
                                        assertThrows(
                                                IOException.class,
                                                () -> FsdpCheckpoint.loadSharded(t, from));
                                Map<String, float[]> after = new LinkedHashMap<>();
                                t.forEachFullParameter((n, a) -> after.put(n, a.toFloatArray()));
                                for (String name : before.keySet()) {
                                    assertArrayEquals(before.get(name), after.get(name), name);
                                }
                                for (FlatUnit u : t.units()) {
                                    for (String id : t.optimizerIds(u)) {
                                        assertTrue(OptimizerState.arrays(opt, id).isEmpty(), id);
                                        assertEquals(0, OptimizerState.counts(opt, id)[1], id);
                                    }
                                }
                                return e.getMessage();
                            }
                        })
                .get(0);
    }

    @Test
    void aFailedLoadChangesNothing() throws Exception {
        run(3, Fixture::adamW, 0, 2, null, null, dir, null);
        // The last rank's file loses its last bytes: the last unit's optimizer state, read after
        // every other unit.
        Path last = dir.resolve("shard-2-of-3.bin");
        byte[] bytes = Files.readAllBytes(last);
        Files.write(last, Arrays.copyOf(bytes, bytes.length - 4));
        String message = loadFails(3, dir);
        assertTrue(message.contains("shard-2-of-3.bin"), message);
    }

    @Test
    void updateCountsResumeWithoutOptimizerState() throws Exception {
        // SGD without momentum keeps no state arrays, only update counts; a learning rate that
        // falls with the count tells whether they were restored.
        Supplier<Optimizer> decaying =
                () -> Optimizer.sgd().setLearningRateTracker((Tracker) n -> 0.1f / (1 + n)).build();
        Run straight = run(3, decaying, 0, 4, null, null, null, null).get(0);
        run(3, decaying, 0, 2, null, null, dir, null);
        Run resumed = run(3, decaying, 2, 2, dir, null, null, null).get(0);
        for (String name : straight.params().keySet()) {
            assertArrayEquals(straight.params().get(name), resumed.params().get(name), name);
        }
    }

    @Test
    void anOptimizerSavedBeforeItsFirstStepLeavesNoStaleState() throws Exception {
        // Saved before any step: no Adam moments, counts of zero. Loaded into a trainer that has
        // stepped, its moments must go, or the next step differs from a fresh run's first.
        run(2, Fixture::adamW, 0, 0, null, null, dir, null);
        Run fresh = run(2, Fixture::adamW, 0, 1, null, null, null, null).get(0);
        Map<String, float[]> resumed =
                Fixture.ranks(
                                2,
                                (group, manager) -> {
                                    Optimizer opt = Fixture.adamW();
                                    try (Model model = Fixture.gptModel(0);
                                            FullyShardedDataParallel t =
                                                    FullyShardedDataParallel.builder()
                                                            .optimizerSlice(900)
                                                            .setModel(model)
                                                            .setTrainingConfig(Fixture.config(opt))
                                                            .setProcessGroup(group)
                                                            .build()) {
                                        for (int s = 5; s < 7; s++) {
                                            Fixture.backward(
                                                    t,
                                                    Fixture.tokens(manager, s, group.getRank(), 2));
                                            t.step();
                                        }
                                        FsdpCheckpoint.loadSharded(t, dir);
                                        for (FlatUnit u : t.units()) {
                                            for (String id : t.optimizerIds(u)) {
                                                assertTrue(
                                                        OptimizerState.arrays(opt, id).isEmpty(),
                                                        id);
                                                assertEquals(0, OptimizerState.counts(opt, id)[0]);
                                                assertEquals(0, OptimizerState.counts(opt, id)[1]);
                                            }
                                        }
                                        Fixture.backward(
                                                t, Fixture.tokens(manager, 0, group.getRank(), 2));
                                        t.step();
                                        Map<String, float[]> full = new LinkedHashMap<>();
                                        t.forEachFullParameter(
                                                (n, a) -> full.put(n, a.toFloatArray()));
                                        return full;
                                    }
                                })
                        .get(0);
        for (String name : fresh.params().keySet()) {
            assertArrayEquals(fresh.params().get(name), resumed.get(name), name);
        }
    }

    @Test
    void filesOfTwoSavesAreRefused() throws Exception {
        // As a crash between two ranks' saves leaves them: rank 1's file one step older.
        Path older = dir.resolve("older");
        run(2, Fixture::adamW, 0, 1, null, null, older, null);
        run(2, Fixture::adamW, 0, 2, null, null, dir, null);
        Files.copy(
                older.resolve("shard-1-of-2.bin"),
                dir.resolve("shard-1-of-2.bin"),
                StandardCopyOption.REPLACE_EXISTING);
        String message = loadFails(2, dir);
        assertTrue(message.contains("(expected: the files of one save)"), message);
        assertTrue(message.contains("shard-1-of-2.bin"), message);
    }

    @Test
    void aDirectoryWithTwoWorldSizesOrAMisplacedFileIsRefused() throws Exception {
        Path mixed = dir.resolve("mixed");
        run(2, FsdpCheckpointTest::sgd, 0, 1, null, null, mixed, null);
        run(3, FsdpCheckpointTest::sgd, 0, 1, null, null, mixed, null);
        String message = loadFails(2, mixed);
        assertTrue(message.contains("world sizes [2, 3]"), message);

        // Rank 1's file under rank 0's name: its header names shard rank 1.
        Path swapped = dir.resolve("swapped");
        run(2, FsdpCheckpointTest::sgd, 0, 1, null, null, swapped, null);
        Files.copy(
                swapped.resolve("shard-1-of-2.bin"),
                swapped.resolve("shard-0-of-2.bin"),
                StandardCopyOption.REPLACE_EXISTING);
        message = loadFails(2, swapped);
        assertTrue(message.contains("shard-0-of-2.bin: written by shard rank 1"), message);
    }

    /** Linear(4) used twice (one weight, two names), then Linear(1). */
    private static Block sharedBlock() {
        Block shared = Linear.builder().setUnits(4).build();
        Block block =
                new SequentialBlock()
                        .add(shared)
                        .add(shared)
                        .add(Linear.builder().setUnits(1).build());
        block.setInitializer(Fixture.deterministic(), p -> true);
        return block;
    }

    /**
     * The shared-block model under FSDP at {@code ranks} ranks: loads a sharded checkpoint first
     * when given, trains {@code steps} SGD steps, then saves sharded and full checkpoints when
     * given; returns rank 0's outputs on a fixed input.
     */
    private static float[] shared(int ranks, int steps, Path load, Path save) throws Exception {
        return Fixture.ranks(
                        ranks,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("shared")) {
                                model.setBlock(sharedBlock());
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .setModel(model)
                                                .setTrainingConfig(
                                                        Fixture.config(sgd(), Loss.l2Loss()))
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(2, 4));
                                    if (load != null) {
                                        FsdpCheckpoint.loadSharded(t, load);
                                    }
                                    for (int s = 0; s < steps; s++) {
                                        float[] x = new float[8];
                                        for (int i = 0; i < x.length; i++) {
                                            x[i] = (float) Math.sin(0.3 * i + s + group.getRank());
                                        }
                                        Fixture.backward(
                                                t,
                                                new NDList[] {
                                                    new NDList(manager.create(x, new Shape(2, 4))),
                                                    new NDList(
                                                            manager.create(
                                                                    new float[] {1, -1},
                                                                    new Shape(2, 1)))
                                                });
                                        t.step();
                                    }
                                    if (save != null) {
                                        FsdpCheckpoint.saveSharded(t, save.resolve("sharded"));
                                        FsdpCheckpoint.saveFull(t, save.resolve("full"), "shared");
                                    }
                                    return t.evaluate(new NDList(probe(manager)))
                                            .head()
                                            .toFloatArray();
                                }
                            }
                        })
                .get(0);
    }

    private static NDArray probe(NDManager manager) {
        return manager.arange(8f).reshape(2, 4).div(8);
    }

    @Test
    void aModelWithABlockUsedTwiceSavesAndLoadsShardedAndFull() throws Exception {
        float[] initial = shared(2, 0, null, null);
        float[] trained = shared(2, 2, null, dir);
        assertTrue(!Arrays.equals(initial, trained), "two steps changed the outputs");
        for (int ranks : new int[] {2, 1}) {
            assertArrayEquals(
                    trained, shared(ranks, 0, dir.resolve("sharded"), null), ranks + " ranks");
        }
        try (Model plain = Model.newInstance("shared");
                NDManager m = NDManager.newBaseManager()) {
            plain.setBlock(sharedBlock());
            plain.load(dir.resolve("full"), "shared");
            NDArray out =
                    plain.getBlock()
                            .forward(new ParameterStore(m, false), new NDList(probe(m)), false)
                            .head();
            assertArrayEquals(trained, out.toFloatArray(), 1e-6f);
        }
    }
}
