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
package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

class DdpBasicsTest {

    private static final Pattern EPOCH =
            Pattern.compile(
                    "\\[rank0]: epoch (\\d+)/(\\d+): train loss ([0-9.]+), accuracy ([0-9.]+) \\|"
                            + " validation loss ([0-9.]+), accuracy ([0-9.]+)");

    @Test
    @Timeout(60)
    void aloneItLearnsTheSpirals() throws Exception {
        DdpBasics.Result r = DdpBasics.runExample("--epochs", "3", "--samples", "1500", "--quiet");
        assertEquals(1, r.worldSize());
        assertEquals(3, r.epochs().size());
        DdpBasics.Epoch last = r.epochs().get(2);
        assertTrue(last.validationAccuracy() > 0.8, "validation accuracy " + last);
        assertTrue(last.trainLoss() < r.epochs().get(0).trainLoss(), r.epochs().toString());
    }

    @Test
    void badOptionsAndGpuWithoutOneAreRefusedNamingWhatIsWrong() {
        IllegalArgumentException bad =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> DdpBasicsOptions.parse("--device", "tpu"));
        assertEquals("--device: tpu (expected: cpu or gpu)", bad.getMessage());
        assertEquals("gpu", DdpBasicsOptions.parse("--device", "GPU").device);
        for (String lr : new String[] {"0", "-0.1", "NaN", "Infinity"}) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> DdpBasicsOptions.parse("--lr", lr));
            assertEquals(
                    "--lr: " + Float.parseFloat(lr) + " (expected: a finite rate > 0)",
                    e.getMessage());
        }
        if (ai.djl.engine.Engine.getInstance().getGpuCount() == 0) {
            // No GPU (CI): the group's nccl backend says what it looked for, before any training.
            RuntimeException e =
                    assertThrows(
                            RuntimeException.class,
                            () ->
                                    DdpBasics.runExample(
                                            "--device", "gpu", "--epochs", "1", "--quiet"));
            // Without NCCL or a driver, the group says so; with them but CPU natives, the example.
            assertTrue(
                    e.getMessage().contains("the nccl backend cannot run here")
                            || e.getMessage().contains("DJL's engine sees no GPU here"),
                    e.getMessage());
        }
    }

    @Test
    @Timeout(60)
    void resumingFromTheLastCheckpointReproducesTheUninterruptedRun(@TempDir Path dir)
            throws Exception {
        String[] common = {"--samples", "900", "--quiet", "--checkpoint", dir.toString()};
        DdpBasics.Result whole = DdpBasics.runExample(concat(common, "--epochs", "4"));
        Files.delete(dir.resolve("ddp.ckpt"));
        DdpBasics.runExample(concat(common, "--epochs", "2"));
        DdpBasics.Result resumed =
                DdpBasics.runExample(concat(common, "--epochs", "4", "--resume"));
        assertEquals(2, resumed.epochs().size());
        assertEquals(whole.epochs().subList(2, 4), resumed.epochs());
        assertArrayEquals(whole.parameters(), resumed.parameters());
    }

    private static String[] concat(String[] a, String... b) {
        List<String> all = new ArrayList<>(List.of(a));
        all.addAll(List.of(b));
        return all.toArray(new String[0]);
    }

    /** bin/djlrun --nproc-per-node 2 ddp_basics, as users run it: a launcher JVM and 2 workers. */
    @Test
    @Timeout(120)
    void twoRanksUnderDjlrunPrintAveragedEpochsFromRankZeroOnly(@TempDir Path dir)
            throws Exception {
        runTwoRanks(dir);
    }

    /** The same with reductions overlapping the next forward pass, through EasyTrain. */
    @Test
    @Timeout(120)
    void twoRanksOverlappingReductionsWithTheNextForwardPass(@TempDir Path dir) throws Exception {
        runTwoRanks(dir, "--overlap");
    }

    private static void runTwoRanks(Path dir, String... extra) throws Exception {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "ddp_basics",
                                "--epochs",
                                "3",
                                "--samples",
                                "1500",
                                "--checkpoint",
                                dir.toString()));
        args.addAll(List.of(extra));
        Djlrun.Run run = Djlrun.run(dir, 2, 100, args.toArray(new String[0]));
        String log = run.log();
        assertEquals(0, run.exitCode(), log);
        assertTrue(
                log.contains(
                        "[rank0]: ddp_basics: 2 rank(s), 1500 training samples (750"
                                + " per rank)"),
                log);
        assertFalse(log.contains("[rank1]:"), "rank 1 prints nothing\n" + log);
        // rank 0's progress bars, sized to its share of the data, reach 100%
        assertTrue(log.contains("Training:    100%"), log);
        Matcher m = EPOCH.matcher(log);
        int epochs = 0;
        double accuracy = 0;
        while (m.find()) {
            epochs++;
            assertEquals(epochs, Integer.parseInt(m.group(1)));
            accuracy = Double.parseDouble(m.group(6));
        }
        assertEquals(3, epochs, log);
        assertTrue(accuracy > 0.8, "validation accuracy " + accuracy + "\n" + log);
        assertTrue(Files.size(dir.resolve("ddp.ckpt")) > 0, "rank 0 wrote the checkpoint");
    }
}
