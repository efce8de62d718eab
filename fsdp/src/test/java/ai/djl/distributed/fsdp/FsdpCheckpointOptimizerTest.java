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
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * A sharded checkpoint names its optimizer's class: one of another optimizer is refused with an
 * IOException naming both, and so is, in files of format version 1 (which do not name it), one
 * whose number of states does not fit; version 1 files of the same optimizer still load.
 */
@Timeout(180)
class FsdpCheckpointOptimizerTest {

    private static final int RANKS = 2;

    @TempDir Path dir;

    private static Optimizer sgd() {
        return Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.05f)).build();
    }

    private static Optimizer sgdWithMomentum() {
        return Optimizer.sgd()
                .setLearningRateTracker(Tracker.fixed(0.05f))
                .optMomentum(0.9f)
                .build();
    }

    private static Optimizer adam() {
        return Optimizer.adam().optLearningRateTracker(Tracker.fixed(0.01f)).build();
    }

    private static FullyShardedDataParallel trainer(
            Model model, Optimizer optimizer, ProcessGroup group) {
        model.setBlock(Fixture.mlp());
        FullyShardedDataParallel t =
                FullyShardedDataParallel.builder()
                        .setModel(model)
                        .setTrainingConfig(Fixture.config(optimizer, Loss.l2Loss()))
                        .setProcessGroup(group)
                        .build();
        t.initialize(new Shape(4, 6));
        return t;
    }

    /**
     * Trains the MLP at two ranks from step {@code from} for {@code steps} steps, loading a sharded
     * checkpoint first and saving one after when given; returns rank 0's full parameters.
     */
    private static Map<String, float[]> train(
            Supplier<Optimizer> optimizer, int from, int steps, Path load, Path save)
            throws Exception {
        return Fixture.ranks(
                        RANKS,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("mlp");
                                    FullyShardedDataParallel t =
                                            trainer(model, optimizer.get(), group)) {
                                if (load != null) {
                                    FsdpCheckpoint.loadSharded(t, load);
                                }
                                for (int s = from; s < from + steps; s++) {
                                    Fixture.backward(
                                            t, Fixture.regression(manager, s, group.getRank()));
                                    t.step();
                                }
                                if (save != null) {
                                    FsdpCheckpoint.saveSharded(t, save);
                                }
                                Map<String, float[]> full = new LinkedHashMap<>();
                                t.forEachFullParameter((n, a) -> full.put(n, a.toFloatArray()));
                                return full;
                            }
                        })
                .get(0);
    }

    /**
     * Loads into a fresh trainer of the given optimizer, expecting an IOException, and checks that
     * the failed load changed neither the parameters nor the optimizer. Returns rank 0's message.
     */
    private static String loadFails(Supplier<Optimizer> optimizer, Path from) throws Exception {
        return Fixture.ranks(
                        RANKS,
                        (group, manager) -> {
                            Optimizer opt = optimizer.get();
                            try (Model model = Model.newInstance("mlp");
                                    FullyShardedDataParallel t = trainer(model, opt, group)) {
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

    /**
     * Rewrites every shard file of {@code from} into {@code to} with another format version: 1
     * drops the optimizer's class, as version 1 wrote them; any other keeps the rest as it is.
     */
    private static void rewriteVersion(Path from, Path to, int version) throws IOException {
        Files.createDirectories(to);
        try (Stream<Path> files = Files.list(from)) {
            for (Path f : files.toList()) {
                ByteArrayOutputStream bytes = new ByteArrayOutputStream();
                try (InputStream is = Files.newInputStream(f);
                        DataInputStream in = new DataInputStream(is);
                        DataOutputStream out = new DataOutputStream(bytes)) {
                    out.writeUTF(in.readUTF());
                    assertEquals(2, in.readInt(), f + ": written as version 2");
                    String optimizer = in.readUTF();
                    out.writeInt(version);
                    if (version != 1) {
                        out.writeUTF(optimizer);
                    }
                    out.write(in.readAllBytes());
                }
                Files.write(to.resolve(f.getFileName()), bytes.toByteArray());
            }
        }
    }

    @Test
    void aCheckpointOfAnotherOptimizerIsRefusedNamingBoth() throws Exception {
        // Plain SGD keeps no state: Adam would load it as a fresh start whose bias correction is
        // that of the saved step.
        Path sgd = dir.resolve("sgd");
        train(FsdpCheckpointOptimizerTest::sgd, 0, 2, null, sgd);
        String message = loadFails(Fixture::adamW, sgd);
        assertTrue(
                message.contains(
                        "optimizer state of ai.djl.training.optimizer.Sgd (expected: the"
                                + " trainer's optimizer, ai.djl.training.optimizer.AdamW)"),
                message);
        assertTrue(message.contains("shard-0-of-2.bin"), message);

        // Adam and AdamW keep as many states, of other meanings.
        Path adam = dir.resolve("adam");
        train(FsdpCheckpointOptimizerTest::adam, 0, 2, null, adam);
        message = loadFails(Fixture::adamW, adam);
        assertTrue(
                message.contains(
                        "optimizer state of ai.djl.training.optimizer.Adam (expected: the"
                                + " trainer's optimizer, ai.djl.training.optimizer.AdamW)"),
                message);
    }

    @Test
    void aVersionOneCheckpointStillLoads() throws Exception {
        Map<String, float[]> straight = train(Fixture::adamW, 0, 4, null, null);
        Path saved = dir.resolve("v2");
        train(Fixture::adamW, 0, 2, null, saved);
        Path old = dir.resolve("v1");
        rewriteVersion(saved, old, 1);
        Map<String, float[]> resumed = train(Fixture::adamW, 2, 2, old, null);
        for (String name : straight.keySet()) {
            assertArrayEquals(straight.get(name), resumed.get(name), name);
        }
    }

    @Test
    void aVersionOneCheckpointOfAnotherStateCountIsAnIoException() throws Exception {
        // Version 1 does not name the optimizer: AdamW's two moments reach SGD's one momentum.
        Path saved = dir.resolve("v2");
        train(Fixture::adamW, 0, 2, null, saved);
        Path old = dir.resolve("v1");
        rewriteVersion(saved, old, 1);
        String message = loadFails(FsdpCheckpointOptimizerTest::sgdWithMomentum, old);
        assertTrue(
                message.contains(
                        "2 optimizer states per range (expected: as many as the trainer's"
                                + " ai.djl.training.optimizer.Sgd keeps"),
                message);
    }

    @Test
    void anUnknownVersionIsRefusedNamingIt() throws Exception {
        Path saved = dir.resolve("v2");
        train(Fixture::adamW, 0, 1, null, saved);
        Path future = dir.resolve("v3");
        rewriteVersion(saved, future, 3);
        String message = loadFails(Fixture::adamW, future);
        assertTrue(message.contains("FSDP shard of format version 3 (expected: 1 or 2)"), message);
    }
}
