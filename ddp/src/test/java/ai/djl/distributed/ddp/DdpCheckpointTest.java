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
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.AbstractMap;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Saving and resuming reproduce the uninterrupted run, optimizer state included (AdamW); a failure
 * on rank 0 (an error, a checkpoint too large) or a corrupt file fails every rank at once, naming
 * the file.
 */
@Timeout(60)
class DdpCheckpointTest {

    private static final int STEPS = 6;
    private static final int BATCH = 4;

    /**
     * The group timeout of the tests in which a rank could wait for rank 0: well over what they
     * take, short of the test's own timeout.
     */
    private static final Duration SHORT = Duration.ofSeconds(15);

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

    /**
     * An {@link Error} on rank 0 (here from the caller's metadata, as an out-of-memory error would
     * come) still reaches every rank: rank 0 rethrows it, the others fail at once naming it, rather
     * than waiting out the group's timeout.
     */
    @Test
    void anErrorOnRankZeroDuringSaveFailsEveryRankAtOnce(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ddp.ckpt");
        List<String> outcomes =
                MultiRank.run(
                        2,
                        SHORT,
                        (group, manager) -> {
                            Map<String, String> metadata =
                                    group.getRank() == 0 ? new FailingMap() : Map.of();
                            try (Model model = Model.newInstance("ddp");
                                    DistributedDataParallel t =
                                            trainer(model, Fixture.mlp(), group)) {
                                DdpCheckpoint.save(t, file, metadata);
                                return "saved";
                            } catch (OutOfMemoryError e) {
                                return "error: " + e.getMessage();
                            } catch (IOException e) {
                                return "failed: " + e.getMessage();
                            }
                        });
        assertEquals("error: injected", outcomes.get(0));
        assertEquals(
                "failed: rank 0 could not write " + file + ": java.lang.OutOfMemoryError: injected",
                outcomes.get(1));
        assertFalse(Files.exists(file));
    }

    /** A checkpoint larger than the limit fails on every rank, naming its size and the limit. */
    @Test
    void aSaveLargerThanTheLimitFailsOnEveryRankNamingTheSize(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("ddp.ckpt");
        long parameters = 884 * 4; // the MLP's floats
        List<List<String>> outcomes =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp");
                                    DistributedDataParallel t =
                                            trainer(model, Fixture.mlp(), group)) {
                                // Below the parameters: refused before anything is encoded.
                                String before = saveFailure(t, file, parameters - 1);
                                // Above them, below the whole file: refused as the file grows.
                                String growing = saveFailure(t, file, parameters + 1);
                                return List.of(before, growing);
                            }
                        });
        String tooLarge =
                file
                        + ": parameters of "
                        + parameters
                        + " bytes (expected: a checkpoint of at most "
                        + (parameters - 1)
                        + " bytes in all)";
        assertEquals(tooLarge, outcomes.get(0).get(0));
        assertEquals(
                "rank 0 could not write " + file + ": java.io.IOException: " + tooLarge,
                outcomes.get(1).get(0));
        String growing = file + ": at least ";
        String limit = " bytes (expected: a checkpoint of at most " + (parameters + 1) + ")";
        for (int r = 0; r < 2; r++) {
            String m = outcomes.get(r).get(1);
            assertTrue(m.contains(growing) && m.endsWith(limit), m);
        }
        assertFalse(Files.exists(file));
    }

    private static String saveFailure(DistributedDataParallel t, Path file, long maxBytes) {
        IOException e =
                assertThrows(
                        IOException.class, () -> DdpCheckpoint.save(t, file, Map.of(), maxBytes));
        return e.getMessage();
    }

    /**
     * A file larger than a checkpoint can be (sparse: it takes no disk) fails on every rank naming
     * its size, where rank 0 used to leave with an out-of-memory error and the others to wait.
     */
    @Test
    void aFileLargerThanTheLimitFailsOnEveryRankAtOnce(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("huge.ckpt");
        // 4 GiB: past the limit, and past what the JDK would read whole, should the check go.
        long size = 1L << 32;
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
        }
        // a short group timeout: a rank left waiting for rank 0 would fail the run by it
        String failure = loadFailure(file, SHORT);
        String expected =
                "rank 0 could not read "
                        + file
                        + ": java.io.IOException: "
                        + file
                        + ": "
                        + size
                        + " bytes (expected: at most "
                        + DdpCheckpoint.MAX_BYTES
                        + ")";
        assertEquals(expected, failure);
    }

    /** A parameter's length field made negative fails the load naming the file and the length. */
    @Test
    void aNegativeParameterLengthFailsNamingTheFile(@TempDir Path dir) throws Exception {
        Path ckpt = dir.resolve("ddp.ckpt");
        train(0, 1, null, ckpt, dir.resolve("x"));
        Layout at = layout(Files.readAllBytes(ckpt));
        corrupt(ckpt, at.firstParameterLength, -5);
        assertEquals(
                ckpt
                        + ": parameter "
                        + at.firstParameter
                        + ": length -5 (expected: 0 or more bytes)",
                loadFailure(ckpt));
    }

    /**
     * An optimizer state's length field asking for 64 MiB (a flipped bit) fails the load naming the
     * file and the length, taking no more memory than the file holds.
     */
    @Test
    void anOptimizerStateLengthPastTheEndFailsNamingTheFile(@TempDir Path dir) throws Exception {
        Path ckpt = dir.resolve("ddp.ckpt");
        train(0, 1, null, ckpt, dir.resolve("x"));
        byte[] saved = Files.readAllBytes(ckpt);
        Layout at = layout(saved);
        corrupt(ckpt, at.firstStateLength, 1 << 26);
        assertEquals(
                ckpt
                        + ": optimizer state "
                        + at.firstState
                        + " of "
                        + at.firstStateParameter
                        + ": length 67108864 (expected: at most the "
                        + (saved.length - at.firstStateLength - 4)
                        + " bytes left)",
                loadFailure(ckpt));
    }

    private static String loadFailure(Path ckpt) throws Exception {
        return loadFailure(ckpt, Ranks.TIMEOUT);
    }

    // Loads on two ranks, each of which must fail; returns the message, the same on both.
    private static String loadFailure(Path ckpt, Duration timeout) throws Exception {
        List<String> messages =
                MultiRank.run(
                        2,
                        timeout,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp");
                                    DistributedDataParallel t =
                                            trainer(model, Fixture.mlp(), group)) {
                                return assertThrows(
                                                IOException.class,
                                                () -> DdpCheckpoint.load(t, ckpt))
                                        .getMessage();
                            }
                        });
        assertEquals(messages.get(0), messages.get(1), "every rank reads the same bytes");
        return messages.get(0);
    }

    /** Where the first parameter's and the first optimizer state's lengths lie in a checkpoint. */
    private record Layout(
            String firstParameter,
            int firstParameterLength,
            String firstState,
            String firstStateParameter,
            int firstStateLength) {}

    /**
     * Walks a checkpoint's layout: magic, version, metadata, the parameters (name, length, bytes),
     * then the optimizer's class, update counts, and per state its name and entries (parameter
     * name, length, bytes).
     */
    private static Layout layout(byte[] file) throws IOException {
        ByteArrayInputStream raw = new ByteArrayInputStream(file);
        DataInputStream in = new DataInputStream(raw);
        in.readInt();
        in.readInt();
        for (int n = in.readInt(); n > 0; n--) {
            in.readUTF();
            in.readUTF();
        }
        int params = in.readInt();
        String firstParameter = in.readUTF();
        int firstParameterLength = file.length - raw.available();
        in.skipNBytes(in.readInt());
        for (int p = 1; p < params; p++) {
            in.readUTF();
            in.skipNBytes(in.readInt());
        }
        in.readUTF();
        in.readInt();
        for (int n = in.readInt(); n > 0; n--) {
            in.readUTF();
            in.readInt();
        }
        assertEquals(2, in.readInt(), "AdamW's two states");
        String firstState = in.readUTF();
        // one entry per parameter after a step: Fixture.mlp's three Linear layers' weights and
        // biases
        assertEquals(6, in.readInt(), "states after a step");
        String firstStateParameter = in.readUTF();
        return new Layout(
                firstParameter,
                firstParameterLength,
                firstState,
                firstStateParameter,
                file.length - raw.available());
    }

    private static void corrupt(Path file, int at, int value) throws IOException {
        byte[] bytes = Files.readAllBytes(file);
        ByteBuffer.wrap(bytes).putInt(at, value);
        Files.write(file, bytes);
    }

    /** Metadata that fails with an {@link Error} as soon as it is read. */
    private static final class FailingMap extends AbstractMap<String, String> {
        @Override
        public Set<Map.Entry<String, String>> entrySet() {
            throw new OutOfMemoryError("injected");
        }
    }
}
