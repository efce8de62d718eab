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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.transformer.GptCheckpoint;
import ai.djl.distributed.transformer.GptGenerator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import javax.imageio.ImageIO;

class TransformerBasicsTest {

    @Test
    void aFewStepsWriteEveryOutput(@TempDir Path dir) throws Exception {
        GptRunResult r =
                TransformerBasics.runExample(
                        "--preset", "tiny",
                        "--steps", "6",
                        "--batch", "4",
                        "--tokenizer", "bpe",
                        "--vocab", "300",
                        "--max-docs", "60",
                        "--eval-every", "3",
                        "--eval-batches", "1",
                        "--final-eval-batches", "2",
                        "--sample-tokens", "12",
                        "--prompt", "Mr President,",
                        "--out", dir.toString());
        assertEquals(6, r.getSteps());
        assertEquals(6L * 4 * 32, r.getTokens());
        assertTrue(Double.isFinite(r.getValidationLoss()));
        assertTrue(r.getUnigramBaseline() > 0 && r.getUnigramBaselineWholeSplit() > 0);

        List<String> csv = Files.readAllLines(dir.resolve("loss.csv"));
        assertEquals("step,elapsed_s,lr,train_loss,val_loss", csv.get(0));
        assertEquals(1 + 6, csv.size());
        assertTrue(csv.get(3).startsWith("3,") && !csv.get(3).endsWith(","), csv.get(3));
        assertTrue(csv.get(6).startsWith("6,") && !csv.get(6).endsWith(","), "final validation");
        assertTrue(csv.get(1).endsWith(","), "no validation after step 1");

        BufferedImage png = ImageIO.read(dir.resolve("loss.png").toFile());
        assertEquals(900, png.getWidth());
        assertEquals(540, png.getHeight());

        String sample = Files.readString(dir.resolve("sample.txt"), StandardCharsets.UTF_8);
        assertEquals(r.getSample(), sample);
        assertTrue(sample.startsWith("Mr President,"), sample);

        // the saved model and tokenizer reproduce the sample with the same seed and settings
        try (GptCheckpoint cp = GptCheckpoint.load(r.getModelDir())) {
            assertEquals(300, cp.getTokenizer().vocabSize());
            int[] ids =
                    GptGenerator.builder(cp.getBlock())
                            .optTemperature(0.8f)
                            .optTopK(40)
                            .build()
                            .generate(
                                    cp.getModel().getNDManager(),
                                    cp.getTokenizer().encode("Mr President,"),
                                    12,
                                    42);
            assertEquals(sample, cp.getTokenizer().decode(ids));
        }
    }

    /**
     * Each row's lr is the rate its step trained with: after the warm-up, the cosine at the
     * budget's fraction that the clock had reached when the step ran, which is the elapsed time of
     * the row before (the clock moves once per step, after it). Computed here from the schedule's
     * formula, not from the tracker.
     */
    @Test
    void theLrColumnIsTheRateEachStepTrainedWith(@TempDir Path dir) throws Exception {
        double peak = 1e-3;
        double budget = 0.05 * 60;
        TransformerBasics.runExample(
                "--preset", "tiny",
                "--minutes", "0.05",
                "--warmup", "1",
                "--lr", "1e-3",
                "--batch", "4",
                "--max-docs", "60",
                "--eval-every", "1000",
                "--final-eval-batches", "1",
                "--sample-tokens", "1",
                "--out", dir.toString());
        List<String> csv = Files.readAllLines(dir.resolve("loss.csv"));
        assertTrue(csv.size() > 4, "a few steps: " + csv);
        double before = 0;
        for (String row : csv.subList(1, csv.size())) {
            String[] f = row.split(",", -1);
            int step = Integer.parseInt(f[0]);
            double lr = Double.parseDouble(f[2]);
            double progress = Math.min(1, before / budget);
            double expected =
                    step <= 1
                            ? peak * step
                            : peak / 10
                                    + 0.5 * (peak - peak / 10) * (1 + Math.cos(Math.PI * progress));
            // elapsed has 3 decimals and lr 6 digits: 1e-3 relative is far below one step's change
            // of the cosine here (a step takes tens of milliseconds of a 3-s budget)
            assertEquals(expected, lr, 1e-3 * peak, row);
            before = Double.parseDouble(f[1]);
        }
    }

    private static final Pattern FINAL =
            Pattern.compile("\\[rank0]: final: validation loss ([0-9.]+) on ([0-9,]+) tokens");

    /**
     * bin/djlrun --nproc-per-node 2 transformer_basics: both ranks train together for a fixed
     * number of steps and end with identical parameters (the example checks the replicas and fails
     * otherwise); rank 0 alone prints and writes every output.
     */
    @Test
    @Timeout(150)
    void twoRanksUnderDjlrunTrainOneModel(@TempDir Path dir) throws Exception {
        Djlrun.Run run = Djlrun.run(dir, 2, 140, tiny(dir, "--steps", "6"));
        String log = run.log();
        assertEquals(0, run.exitCode(), log);
        assertTrue(
                log.contains(
                        "[rank0]: data parallel: 2 rank(s), 4 sequences per rank and step (8 in"
                                + " all)"),
                log);
        assertTrue(log.contains("[rank0]: parameters identical on all 2 ranks"), log);
        assertFalse(log.contains("[rank1]:"), "rank 1 prints nothing\n" + log);
        Matcher m = FINAL.matcher(log);
        assertTrue(m.find(), log);
        assertTrue(Double.isFinite(Double.parseDouble(m.group(1))), log);
        List<String> csv = Files.readAllLines(dir.resolve("out/loss.csv"));
        assertEquals(1 + 6, csv.size(), csv.toString());
        assertTrue(Files.isDirectory(dir.resolve("out/model")), "rank 0 saved the model");
        assertTrue(
                Files.readString(dir.resolve("out/sample.txt"), StandardCharsets.UTF_8)
                        .startsWith("Mr President,"));
    }

    /**
     * Bounded by time only, the ranks must still stop after the same step: they agree on rank 0's
     * clock. Were each to stop by its own, one would wait in a collective the other never joins and
     * the run would fail by timeout, or the replicas would differ.
     */
    @Test
    @Timeout(150)
    void twoRanksBoundedByTimeStopTogether(@TempDir Path dir) throws Exception {
        Djlrun.Run run = Djlrun.run(dir, 2, 140, tiny(dir, "--minutes", "0.1"));
        String log = run.log();
        assertEquals(0, run.exitCode(), log);
        assertTrue(log.contains("[rank0]: parameters identical on all 2 ranks"), log);
        List<String> csv = Files.readAllLines(dir.resolve("out/loss.csv"));
        assertTrue(csv.size() > 2, "trained a few steps: " + csv);
    }

    private static String[] tiny(Path dir, String... extra) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "transformer_basics",
                                "--preset",
                                "tiny",
                                "--batch",
                                "4",
                                "--vocab",
                                "300",
                                "--max-docs",
                                "60",
                                "--eval-every",
                                "3",
                                "--eval-batches",
                                "2",
                                "--final-eval-batches",
                                "3",
                                "--sample-tokens",
                                "12",
                                "--out",
                                dir.resolve("out").toString()));
        args.addAll(List.of(extra));
        return args.toArray(new String[0]);
    }
}
