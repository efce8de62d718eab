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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/** Saving and resuming reproduce the uninterrupted run, optimizer state included (AdamW). */
@Timeout(60)
class DdpCheckpointTest {

    private static final int STEPS = 6;
    private static final int BATCH = 4;

    /** Trains steps [from, to) on a fresh trainer, resuming from {@code resume} when given. */
    private static List<Map<String, float[]>> train(
            int from, int to, Path resume, Path save, Path rank1Path) throws Exception {
        return Ranks.run(
                2,
                (group, manager) -> {
                    try (Model model = Model.newInstance("ddp")) {
                        model.setBlock(Fixture.mlp());
                        try (DistributedDataParallel t =
                                DistributedDataParallel.builder()
                                        .setModel(model)
                                        .setTrainingConfig(
                                                Fixture.config(Fixture.adamW())
                                                        .optInitializer(
                                                                Fixture.deterministic(), p -> true))
                                        .setProcessGroup(group)
                                        .build()) {
                            t.initialize(new Shape(BATCH, Fixture.IN));
                            // only rank 0 reads or writes: rank 1's path may not even exist
                            Path mine = group.getRank() == 0 ? null : rank1Path;
                            if (resume != null) {
                                Map<String, String> meta =
                                        DdpCheckpoint.load(t, mine != null ? mine : resume);
                                assertEquals(Map.of("step", String.valueOf(from)), meta);
                            }
                            for (int s = from; s < to; s++) {
                                Fixture.step(t, manager, s, group.getRank(), BATCH);
                            }
                            if (save != null) {
                                DdpCheckpoint.save(
                                        t,
                                        mine != null ? mine : save,
                                        Map.of("step", String.valueOf(to)));
                            }
                            return Fixture.snapshot(model.getBlock());
                        }
                    }
                });
    }

    @Test
    void resumingFromACheckpointReproducesTheUninterruptedRun(@TempDir Path dir) throws Exception {
        Path nowhere = dir.resolve("rank1-never-written/ckpt");
        List<Map<String, float[]>> whole = train(0, STEPS, null, null, nowhere);
        Path ckpt = dir.resolve("ckpt/ddp.ckpt");
        List<Map<String, float[]>> half = train(0, STEPS / 2, null, ckpt, nowhere);
        assertTrue(Files.size(ckpt) > 884 * 4 * 3, "parameters and two Adam moments");
        assertFalse(Files.exists(nowhere));
        List<Map<String, float[]>> resumed = train(STEPS / 2, STEPS, ckpt, null, nowhere);
        for (int r = 0; r < 2; r++) {
            Fixture.assertSame(whole.get(r), resumed.get(r));
        }
        assertFalse(
                Arrays.equals(
                        half.get(0).get("05Linear_weight"), whole.get(0).get("05Linear_weight")));
    }

    /** Rank 0 cannot write (the directory is a file): every rank fails, none waits. */
    @Test
    void aSaveThatFailsOnRankZeroFailsOnEveryRank(@TempDir Path dir) throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("file"), "x");
        List<String> outcomes =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp");
                                    DistributedDataParallel t =
                                            trainer(model, Fixture.mlp(), group)) {
                                DdpCheckpoint.save(t, notADirectory.resolve("ddp.ckpt"), Map.of());
                                return "saved";
                            } catch (IOException e) {
                                return "failed: " + e.getMessage();
                            }
                        });
        assertTrue(outcomes.get(0).startsWith("failed"), outcomes.get(0));
        assertTrue(outcomes.get(1).startsWith("failed: rank 0 could not write"), outcomes.get(1));
    }

    /**
     * A checkpoint whose last layer does not fit the model fails before anything is restored: the
     * layers before it keep their values.
     */
    @Test
    void aCheckpointThatDoesNotFitChangesNothing(@TempDir Path dir) throws Exception {
        Path ckpt = dir.resolve("ddp.ckpt");
        train(0, 2, null, ckpt, dir.resolve("x"));
        List<Boolean> unchanged =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            Block wider =
                                    new SequentialBlock()
                                            .add(Linear.builder().setUnits(32).build())
                                            .add(Activation::relu)
                                            .add(Linear.builder().setUnits(16).build())
                                            .add(Activation::relu)
                                            .add(Linear.builder().setUnits(5).build());
                            try (Model model = Model.newInstance("ddp");
                                    DistributedDataParallel t = trainer(model, wider, group)) {
                                Map<String, float[]> before = Fixture.snapshot(wider);
                                IllegalStateException e =
                                        assertThrows(
                                                IllegalStateException.class,
                                                () -> DdpCheckpoint.load(t, ckpt));
                                assertTrue(
                                        e.getMessage().contains("05Linear_weight"), e.getMessage());
                                Fixture.assertSame(before, Fixture.snapshot(wider));
                                return true;
                            }
                        });
        assertEquals(List.of(true, true), unchanged);
    }

    private static DistributedDataParallel trainer(
            Model model, Block block, ai.djl.distributed.pg.ProcessGroup group) {
        model.setBlock(block);
        DistributedDataParallel t =
                DistributedDataParallel.builder()
                        .setModel(model)
                        .setTrainingConfig(
                                Fixture.config(Fixture.adamW())
                                        .optInitializer(Fixture.deterministic(), p -> true))
                        .setProcessGroup(group)
                        .build();
        t.initialize(new Shape(BATCH, Fixture.IN));
        return t;
    }

    @Test
    void aMissingCheckpointFailsOnEveryRank(@TempDir Path dir) {
        Exception e =
                assertThrows(
                        IOException.class,
                        () -> train(1, 1, dir.resolve("missing"), null, dir.resolve("x")));
        assertTrue(e.getMessage().contains("rank 0 could not read"), e.getMessage());
    }
}
