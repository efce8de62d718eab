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

import ai.djl.Model;
import ai.djl.distributed.fsdp.FsdpCheckpoint;
import ai.djl.distributed.fsdp.FullyShardedDataParallel;
import ai.djl.distributed.fsdp.ShardingStrategy;
import ai.djl.distributed.pg.DeviceMesh;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.distributed.transformer.GptCheckpoint;
import ai.djl.distributed.transformer.GptModel;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.Trainer;
import ai.djl.translate.TranslateException;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Locale;

/**
 * {@code fsdp_basics}: trains a GPT larger than {@code transformer_basics}'s (the {@code small}
 * preset: 8 layers, width 256, about 6.5 M parameters) on the Europarl corpus with {@link
 * FullyShardedDataParallel}, {@code FULL_SHARD} unless {@code --strategy} picks another, one unit
 * per transformer block. It logs and writes what {@code transformer_basics} does (progress, loss
 * beside the unigram baseline, {@code loss.csv}, {@code loss.png}, {@code sample.txt}) and prints,
 * for every rank, the bytes of parameters, gradients and optimizer state it holds at rest and its
 * peak resident memory, beside what DDP would hold. It ends with a full checkpoint ({@code model/},
 * a {@link GptCheckpoint}) that rank 0 loads into a plain single-process model, checking that it
 * generates the same sample as the trained model.
 *
 * <p>Run it under a launcher: {@code bin/djlrun --nproc-per-node 2 fsdp_basics}. Options: those of
 * {@code transformer_basics} (with other defaults: {@code --preset small}, {@code --batch 8},
 * {@code --out out/fsdp_basics}) and {@code --strategy}.
 */
public final class FsdpBasics {

    /** The command line: the GPT options and the sharding strategy. */
    static final class Options {

        @Mixin GptTrainOptions gpt = new GptTrainOptions();

        @Option(
                names = "--strategy",
                paramLabel = "S",
                description =
                        "FULL_SHARD (default), SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD (rows of"
                                + " LOCAL_WORLD_SIZE ranks)")
        String strategy = "FULL_SHARD";

        Options() {
            gpt.preset = "small";
            gpt.batch = 8;
            // A few minutes give this model a few hundred steps: a shorter warm-up than
            // transformer_basics' leaves most of them at the peak rate.
            gpt.warmup = 30;
            gpt.out = Paths.get("out", "fsdp_basics");
        }
    }

    private static final String SYNOPSIS = "usage: fsdp_basics [options]";

    private FsdpBasics() {}

    /**
     * Runs the example from the command line.
     *
     * @param args the options
     * @throws IOException if the corpus cannot be read or the outputs cannot be written
     * @throws TranslateException if the dataset fails to produce a batch
     */
    public static void main(String[] args) throws IOException, TranslateException {
        if (args.length > 0 && ("--help".equals(args[0]) || "-h".equals(args[0]))) {
            System.out.println(ExampleCommandLine.usage(new Options(), SYNOPSIS));
            return;
        }
        Options o = ExampleCommandLine.parseOrExit("fsdp_basics", () -> parse(args));
        TransformerBasics.run(o.gpt, new Sharded(strategy(o.strategy)));
    }

    /**
     * Runs the example: under a launcher as one rank of the job, else alone (one rank holding
     * everything).
     *
     * @param args the options, as on the command line
     * @return what the run measured and wrote
     * @throws IOException if the corpus cannot be read or the outputs cannot be written
     * @throws TranslateException if the dataset fails to produce a batch
     */
    public static GptRunResult runExample(String... args) throws IOException, TranslateException {
        Options o = parse(args);
        return TransformerBasics.run(o.gpt, new Sharded(strategy(o.strategy)));
    }

    /**
     * Returns how many ranks share the shards under HYBRID_SHARD: one host's, {@code
     * LOCAL_WORLD_SIZE} as the launcher sets it (read through {@link DistributedEnv}: the
     * environment, then a system property), 1 without it.
     *
     * @param env the launcher's environment
     * @param worldSize the number of ranks
     * @return the ranks per host, which divides {@code worldSize}
     * @throws IllegalArgumentException if LOCAL_WORLD_SIZE is not an integer, is below 1, or does
     *     not divide the number of ranks
     */
    static int ranksPerHost(DistributedEnv env, int worldSize) {
        int perHost = env.getInt("LOCAL_WORLD_SIZE").orElse(1);
        if (perHost < 1) {
            throw new IllegalArgumentException(
                    "LOCAL_WORLD_SIZE: " + perHost + " (expected: at least 1)");
        }
        if (worldSize % perHost != 0) {
            throw new IllegalArgumentException(
                    "HYBRID_SHARD: "
                            + worldSize
                            + " ranks (expected: a multiple of LOCAL_WORLD_SIZE "
                            + perHost
                            + ")");
        }
        return perHost;
    }

    /** Reads and checks the options, the strategy's name included. */
    private static Options parse(String... args) {
        Options o = ExampleCommandLine.parse(new Options(), SYNOPSIS, args);
        o.gpt.check();
        strategy(o.strategy);
        return o;
    }

    private static ShardingStrategy strategy(String name) {
        try {
            return ShardingStrategy.valueOf(name.toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "--strategy: "
                            + name
                            + " (expected: FULL_SHARD, SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD)",
                    e);
        }
    }

    /** The FSDP flavour of the GPT example. */
    private static final class Sharded implements TransformerBasics.Flavour {

        private final ShardingStrategy strategy;
        private DeviceMesh mesh;

        Sharded(ShardingStrategy strategy) {
            this.strategy = strategy;
        }

        @Override
        public String name() {
            return "fsdp_basics " + strategy;
        }

        @Override
        public String describe(int ranks, int batch) {
            return String.format(
                    Locale.ROOT,
                    "fully sharded data parallel: %s over %d rank(s), one unit per block, %d"
                            + " sequences per rank and step (%d in all)",
                    strategy,
                    ranks,
                    batch,
                    batch * ranks);
        }

        @Override
        public Trainer trainer(Model model, DefaultTrainingConfig config, ProcessGroup group) {
            FullyShardedDataParallel.Builder b =
                    FullyShardedDataParallel.builder()
                            .setModel(model)
                            .setTrainingConfig(config)
                            .setProcessGroup(group)
                            .optStrategy(strategy);
            if (strategy == ShardingStrategy.HYBRID_SHARD) {
                // One host's ranks share the shards (a row); hosts replicate them.
                int perHost = ranksPerHost(DistributedEnv.fromProcess(), group.getSize());
                mesh = DeviceMesh.create(group, group.getSize() / perHost, perHost);
                b.optDeviceMesh(mesh);
            }
            return b.build();
        }

        @Override
        public TransformerBasics.Finished finish(
                TransformerBasics run, Trainer trainer, Model model, Path modelDir)
                throws IOException {
            if (!(trainer instanceof FullyShardedDataParallel fsdp)) {
                throw new IllegalArgumentException(
                        "trainer: "
                                + trainer.getClass().getName()
                                + " (expected: the FullyShardedDataParallel this flavour built)");
            }
            reportMemory(run, fsdp, model);
            String[] inMemory = {""};
            FsdpCheckpoint.saveFull(
                    fsdp,
                    full -> {
                        GptCheckpoint.save(modelDir, full, run.tokenizer());
                        inMemory[0] = run.sample(full, (GptModel) full.getBlock());
                    });
            if (mesh != null) {
                mesh.close();
            }
            if (!run.isLead()) {
                return new TransformerBasics.Finished("", 0);
            }
            try (GptCheckpoint loaded = GptCheckpoint.load(modelDir)) {
                String again = run.sample(loaded.getModel(), loaded.getBlock());
                if (!again.equals(inMemory[0])) {
                    throw new IllegalStateException(
                            "the full checkpoint generates "
                                    + again
                                    + " (expected: the trained model's "
                                    + inMemory[0]
                                    + ")");
                }
                run.log(
                        "full checkpoint: %s loads into a plain single-process model that"
                                + " generates the same sample",
                        modelDir);
                return new TransformerBasics.Finished(
                        again, TransformerBasics.checksum(loaded.getBlock()));
            } catch (ai.djl.MalformedModelException e) {
                throw new IOException(modelDir + ": " + e.getMessage(), e);
            }
        }

        /** Every rank's bytes at rest and peak memory, printed by rank 0 beside DDP's. */
        private void reportMemory(TransformerBasics run, FullyShardedDataParallel fsdp, Model m)
                throws IOException {
            FullyShardedDataParallel.MemoryAtRest mem = fsdp.memoryAtRest();
            long p = ((GptModel) m.getBlock()).getConfig().paramCount();
            double peak = FsdpGptBench.peakRssMib();
            ByteBuffer mine = ByteBuffer.allocate(4 * Long.BYTES);
            mine.putLong(mem.parameters())
                    .putLong(mem.gradients())
                    .putLong(mem.optimizerState())
                    .putLong(Double.doubleToLongBits(peak));
            List<byte[]> all = run.group().objects().allGather(mine.array());
            double mib = 1 << 20;
            run.log(
                    "at rest, DDP would hold on every rank: parameters %.1f MiB, gradients %.1f"
                            + " MiB, AdamW state %.1f MiB (%.1f MiB), plus its flat buckets",
                    4 * p / mib, 4 * p / mib, 8 * p / mib, 16 * p / mib);
            for (int r = 0; r < all.size(); r++) {
                ByteBuffer b = ByteBuffer.wrap(all.get(r));
                long params = b.getLong();
                long grads = b.getLong();
                long state = b.getLong();
                double rss = Double.longBitsToDouble(b.getLong());
                run.log(
                        "rank %d holds at rest: parameters %.1f MiB, gradients %.1f MiB, AdamW"
                                + " state %.1f MiB (%.1f MiB, %.2f of DDP's); peak resident memory"
                                + " %.0f MiB",
                        r,
                        params / mib,
                        grads / mib,
                        state / mib,
                        (params + grads + state) / mib,
                        (params + grads + state) / (16.0 * p),
                        rss);
            }
        }
    }
}
