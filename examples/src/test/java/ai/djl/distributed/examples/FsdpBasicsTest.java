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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.distributed.transformer.GptCheckpoint;
import ai.djl.distributed.transformer.GptGenerator;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

class FsdpBasicsTest {

    private static final Pattern HOLDS =
            Pattern.compile(
                    "\\[rank0]: rank (\\d) holds at rest: parameters ([0-9.]+) MiB, gradients"
                            + " ([0-9.]+) MiB, AdamW state ([0-9.]+) MiB \\(([0-9.]+) MiB, ([0-9.]+)"
                            + " of DDP's\\)");

    /**
     * bin/djlrun --nproc-per-node 2 fsdp_basics: two ranks train with FULL_SHARD, each holding half
     * of every unit (its report of the bytes at rest says so), and the full checkpoint that rank 0
     * writes loads into a plain model that reproduces the sample.
     */
    @Test
    @Timeout(150)
    void twoRanksShardTheModelAndWriteAFullCheckpoint(@TempDir Path dir) throws Exception {
        String log = runTwoRanksHoldingHalf(dir, "FULL_SHARD", 6);
        assertTrue(log.contains("generates the same sample"), log);
        Path out = dir.resolve("out");
        List<String> csv = Files.readAllLines(out.resolve("loss.csv"));
        assertEquals(1 + 6, csv.size(), csv.toString());
        String sample = Files.readString(out.resolve("sample.txt"), StandardCharsets.UTF_8);
        assertTrue(sample.startsWith("Mr President,"), sample);
        // The checkpoint is a plain model: loaded without FSDP, it generates the same sample.
        try (GptCheckpoint cp = GptCheckpoint.load(out.resolve("model"))) {
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

    @Test
    void anUnknownStrategyIsRefusedNamingIt() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> FsdpBasics.runExample("--strategy", "ZERO_4"));
        assertEquals(
                "--strategy: ZERO_4 (expected: FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or"
                        + " HYBRID_SHARD)",
                e.getMessage());
    }

    /**
     * bin/djlrun --nproc-per-node 2 fsdp_basics --strategy HYBRID_SHARD: LOCAL_WORLD_SIZE is 2, so
     * one host's two ranks share the shards (a 1 x 2 mesh), each holding half.
     */
    @Test
    @Timeout(150)
    void hybridShardShardsWithinTheHost(@TempDir Path dir) throws Exception {
        runTwoRanksHoldingHalf(dir, "HYBRID_SHARD", 3);
    }

    /**
     * Runs bin/djlrun --nproc-per-node 2 fsdp_basics with a tiny model; checks that it succeeded
     * with the strategy, and that each rank holds half of what DDP holds.
     *
     * @return the job's output
     */
    private static String runTwoRanksHoldingHalf(Path dir, String strategy, int steps)
            throws Exception {
        Djlrun.Run run =
                Djlrun.run(
                        dir,
                        2,
                        140,
                        "fsdp_basics",
                        "--strategy",
                        strategy,
                        "--preset",
                        "tiny",
                        "--steps",
                        Integer.toString(steps),
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
                        dir.resolve("out").toString());
        String log = run.log();
        assertEquals(0, run.exitCode(), log);
        assertTrue(
                log.contains(
                        "[rank0]: fully sharded data parallel: " + strategy + " over 2 rank(s)"),
                log);
        Matcher m = HOLDS.matcher(log);
        int ranks = 0;
        while (m.find()) {
            ranks++;
            // Half of DDP's 16 bytes per parameter, and a bit for the padding.
            double share = Double.parseDouble(m.group(6));
            assertTrue(share >= 0.49 && share <= 0.55, m.group());
        }
        assertEquals(2, ranks, log);
        return log;
    }

    /**
     * HYBRID_SHARD reads LOCAL_WORLD_SIZE through DistributedEnv: the environment, else a system
     * property; a bad value names the variable and what was expected.
     */
    @Test
    void hybridShardReadsLocalWorldSizeThroughDistributedEnv() {
        assertEquals(1, FsdpBasics.ranksPerHost(DistributedEnv.of(Map.of()), 3));
        assertEquals(
                2, FsdpBasics.ranksPerHost(DistributedEnv.of(Map.of("LOCAL_WORLD_SIZE", "2")), 4));
        assertEquals(
                "LOCAL_WORLD_SIZE: 'two' (expected: an integer)",
                hybridFails(Map.of("LOCAL_WORLD_SIZE", "two"), 4));
        assertEquals(
                "LOCAL_WORLD_SIZE: 0 (expected: at least 1)",
                hybridFails(Map.of("LOCAL_WORLD_SIZE", "0"), 4));
        assertEquals(
                "HYBRID_SHARD: 3 ranks (expected: a multiple of LOCAL_WORLD_SIZE 2)",
                hybridFails(Map.of("LOCAL_WORLD_SIZE", "2"), 3));
        Assumptions.assumeTrue(
                System.getenv("LOCAL_WORLD_SIZE") == null, "LOCAL_WORLD_SIZE is set");
        String saved = System.getProperty("LOCAL_WORLD_SIZE");
        System.setProperty("LOCAL_WORLD_SIZE", "4");
        try {
            assertEquals(4, FsdpBasics.ranksPerHost(DistributedEnv.fromProcess(), 8));
        } finally {
            if (saved == null) {
                System.clearProperty("LOCAL_WORLD_SIZE");
            } else {
                System.setProperty("LOCAL_WORLD_SIZE", saved);
            }
        }
    }

    private static String hybridFails(Map<String, String> env, int worldSize) {
        return assertThrows(
                        IllegalArgumentException.class,
                        () -> FsdpBasics.ranksPerHost(DistributedEnv.of(env), worldSize))
                .getMessage();
    }
}
