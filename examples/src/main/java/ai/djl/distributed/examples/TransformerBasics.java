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
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.ddp.DistributedDataParallel;
import ai.djl.distributed.parallel.DistributedSampler;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.transformer.CausalLmLoss;
import ai.djl.distributed.transformer.GptCheckpoint;
import ai.djl.distributed.transformer.GptConfig;
import ai.djl.distributed.transformer.GptGenerator;
import ai.djl.distributed.transformer.GptModel;
import ai.djl.distributed.transformer.data.TokenWindowDataset;
import ai.djl.distributed.transformer.data.Tokenizer;
import ai.djl.distributed.transformer.data.UnigramBaseline;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.util.ProgressBar;
import ai.djl.translate.TranslateException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * {@code transformer_basics}: trains the {@code mini} GPT on the Europarl corpus, then samples text
 * from it. Alone it trains in one process; under a launcher ({@code bin/djlrun --nproc-per-node 2
 * transformer_basics}) it trains data-parallel, each rank on its shard of every epoch ({@link
 * DistributedSampler}) with its gradients averaged by a {@link DistributedDataParallel} trainer, so
 * that a step reads {@code --batch} sequences per rank.
 *
 * <p>Logs training and validation loss (averaged over the ranks) beside the unigram baseline (the
 * loss of a model that ignores context), and writes into the output directory: {@code loss.csv},
 * {@code loss.png}, the model with its tokenizer ({@code model/}, a {@link GptCheckpoint}) and the
 * generated {@code sample.txt}. Only rank 0 prints and writes. {@code --help} lists the options
 * ({@link GptTrainOptions#USAGE}).
 *
 * <p>The ranks share one clock: rank 0's elapsed time travels with each step's loss, so every rank
 * follows the same learning-rate schedule and stops after the same step when the time budget runs
 * out. Each rank deciding on its own clock would leave one rank waiting in a collective the others
 * never join, and the replicas drifting apart.
 */
public final class TransformerBasics {

    /**
     * What differs between the GPT examples ({@code transformer_basics} with DDP, {@code
     * fsdp_basics} with FSDP): the trainer, and what happens to the trained model.
     */
    interface Flavour {

        /** The example's name, in the plot's title. */
        String name();

        /** A log line on how the ranks share the work. */
        String describe(int ranks, int batch);

        /** Builds the trainer; every rank calls it. */
        Trainer trainer(Model model, DefaultTrainingConfig config, ProcessGroup group);

        /**
         * Runs after training and the final validation, on every rank: writes the model into {@code
         * modelDir} (rank 0) and returns the generated sample (rank 0; empty elsewhere) and a
         * checksum of the parameters.
         */
        Finished finish(TransformerBasics run, Trainer trainer, Model model, Path modelDir)
                throws IOException;
    }

    /**
     * What {@link Flavour#finish} returns.
     *
     * @param sample the generated text (rank 0)
     * @param checksum a checksum of the trained parameters
     */
    record Finished(String sample, long checksum) {}

    /** DDP: replicas checked identical, the model written and sampled by rank 0. */
    private static final Flavour DDP =
            new Flavour() {
                @Override
                public String name() {
                    return "transformer_basics";
                }

                @Override
                public String describe(int ranks, int batch) {
                    return String.format(
                            Locale.ROOT,
                            "data parallel: %d rank(s), %d sequences per rank and step (%d in all)",
                            ranks,
                            batch,
                            batch * ranks);
                }

                @Override
                public Trainer trainer(
                        Model model, DefaultTrainingConfig config, ProcessGroup group) {
                    return DistributedDataParallel.builder()
                            .setModel(model)
                            .setTrainingConfig(config)
                            .setProcessGroup(group)
                            .build();
                }

                @Override
                public Finished finish(
                        TransformerBasics run, Trainer trainer, Model model, Path modelDir)
                        throws IOException {
                    GptModel block = (GptModel) model.getBlock();
                    long checksum = run.checkReplicas(block);
                    String sample = run.lead ? run.sample(model, block) : "";
                    if (run.lead) {
                        GptCheckpoint.save(modelDir, model, run.tokenizer);
                    }
                    return new Finished(sample, checksum);
                }
            };

    private final GptTrainOptions options;
    private final ProcessGroup group;
    private final Flavour flavour;
    private final boolean lead;
    private Tokenizer tokenizer;

    /** Rank 0's seconds since training began, as of the last step: every rank's clock. */
    private double clock;

    private TransformerBasics(GptTrainOptions options, ProcessGroup group, Flavour flavour) {
        this.options = options;
        this.group = group;
        this.flavour = flavour;
        this.lead = group.getRank() == 0;
    }

    /**
     * Runs the example from the command line.
     *
     * @param args the options
     * @throws IOException if the corpus cannot be read or the outputs cannot be written
     * @throws TranslateException if the dataset fails to produce a batch
     */
    public static void main(String[] args) throws IOException, TranslateException {
        if (args.length > 0 && ("--help".equals(args[0]) || "-h".equals(args[0]))) {
            System.out.println(GptTrainOptions.USAGE);
            return;
        }
        run(
                ExampleCommandLine.parseOrExit(
                        "transformer_basics", () -> GptTrainOptions.parse(args)),
                DDP);
    }

    /** Returns the tokenizer the model was trained with (after the corpus is read). */
    Tokenizer tokenizer() {
        return tokenizer;
    }

    /**
     * Runs the example: under a launcher ({@code WORLD_SIZE} set) as one rank of a data-parallel
     * job, else alone.
     *
     * @param args the options, as on the command line
     * @return what the run measured and wrote
     * @throws IOException if the corpus cannot be read or the outputs cannot be written
     * @throws TranslateException if the dataset fails to produce a batch
     */
    public static GptRunResult runExample(String... args) throws IOException, TranslateException {
        return run(GptTrainOptions.parse(args), DDP);
    }

    /** Trains and samples the GPT the options describe, with a flavour's trainer. */
    static GptRunResult run(GptTrainOptions options, Flavour flavour)
            throws IOException, TranslateException {
        return ExampleGroup.run(group -> new TransformerBasics(options, group, flavour).run());
    }

    /** Returns the process group the example trains in. */
    ProcessGroup group() {
        return group;
    }

    /** Returns the options. */
    GptTrainOptions options() {
        return options;
    }

    /** Returns whether this is rank 0, which prints and writes. */
    boolean isLead() {
        return lead;
    }

    private GptRunResult run() throws IOException, TranslateException {
        long start = System.nanoTime();
        Engine.getInstance().setRandomSeed(options.seed);
        TrainingData data = TrainingData.prepare(options.tokenizer, options.vocab, options.maxDocs);
        tokenizer = data.getTokenizer();
        GptConfig config =
                GptConfig.preset(options.preset)
                        .setVocabSize(tokenizer.vocabSize())
                        .optDropout(options.dropout)
                        .build();
        int context = config.getContextLength();
        log(
                "corpus: %,d training and %,d validation tokens (%s); unigram baseline %.4f"
                        + " nats/token (%.1f s)",
                data.getTrain().length,
                data.getValidation().length,
                tokenizer,
                data.getUnigramBaseline(),
                seconds(start));
        log("model: %s", config);
        int ranks = group.getSize();
        log("%s", flavour.describe(ranks, options.batch));

        TokenWindowDataset train =
                TokenWindowDataset.builder()
                        .setTokens(data.getTrain())
                        .setContextLength(context)
                        .setSampling(
                                DistributedSampler.builder()
                                        .setBatchSize(options.batch)
                                        .setProcessGroup(group)
                                        .optSeed(options.seed)
                                        .optDropLast(true)
                                        .build())
                        .build();
        Validation validation =
                new Validation(
                        TokenWindowDataset.builder()
                                .setTokens(data.getValidation())
                                .setContextLength(context)
                                .setSampling(options.batch, false)
                                .build(),
                        options.batch,
                        group);

        Files.createDirectories(options.out);
        LossCurve curve = new LossCurve();
        double budgetSeconds = options.minutes * 60;
        WarmupCosineTracker lr =
                new WarmupCosineTracker(
                        options.lr, options.warmup, options.steps, () -> clock / budgetSeconds);
        DefaultTrainingConfig tc =
                new DefaultTrainingConfig(new CausalLmLoss())
                        .optOptimizer(
                                Optimizer.adamW()
                                        .optLearningRateTracker(lr)
                                        .optWeightDecays(options.weightDecay)
                                        .build());
        try (Model model = Model.newInstance("gpt")) {
            model.setBlock(new GptModel(config));
            try (Trainer trainer = flavour.trainer(model, tc, group)) {
                trainer.initialize(new Shape(options.batch, context));
                long trainStart = System.nanoTime();
                int steps = train(trainer, train, validation, curve, lr, budgetSeconds);
                double trainSeconds = seconds(trainStart);

                Validation.Score fin = validation.score(trainer, options.finalEvalBatches);
                double sameTokens =
                        UnigramBaseline.crossEntropy(
                                data.getTrain(), fin.targets, tokenizer.vocabSize());
                log(
                        "final: validation loss %.4f on %,d tokens; unigram baseline %.4f on the"
                                + " same tokens, %.4f on the whole validation split",
                        fin.loss, fin.targets.length, sameTokens, data.getUnigramBaseline());
                curve.addValidation(steps, fin.loss);

                Path modelDir = options.out.resolve("model");
                Finished finished = flavour.finish(this, trainer, model, modelDir);
                String sample = finished.sample();
                long checksum = finished.checksum();
                if (lead) {
                    curve.writeCsv(options.out.resolve("loss.csv"));
                    curve.writePng(
                            options.out.resolve("loss.png"),
                            String.format(
                                    Locale.ROOT,
                                    "%s: %s GPT, %d steps, %.0f s",
                                    flavour.name(),
                                    options.preset,
                                    steps,
                                    trainSeconds),
                            sameTokens);
                    Files.writeString(
                            options.out.resolve("sample.txt"), sample, StandardCharsets.UTF_8);
                }
                log("sample (prompt %s):%n%s", quoted(options.prompt), sample);
                log(
                        "wrote %s (loss.csv, loss.png, model/, sample.txt); %.1f s in all",
                        options.out, seconds(start));
                return new GptRunResult(
                        ranks,
                        steps,
                        (long) steps * options.batch * context * ranks,
                        trainSeconds,
                        seconds(start),
                        curve.recentTrainLoss(50),
                        fin.loss,
                        sameTokens,
                        data.getUnigramBaseline(),
                        sample,
                        options.out,
                        modelDir,
                        checksum);
            }
        }
    }

    private int train(
            Trainer trainer,
            TokenWindowDataset train,
            Validation validation,
            LossCurve curve,
            WarmupCosineTracker lr,
            double budgetSeconds)
            throws IOException, TranslateException {
        long t0 = System.nanoTime();
        ProgressBar bar =
                new ProgressBar(
                        "Training",
                        options.steps > 0 ? options.steps : (long) (options.minutes * 60));
        int step = 0;
        while (true) {
            int stepsBefore = step;
            for (Batch batch : trainer.iterateDataset(train)) {
                float loss;
                try (batch) {
                    try (GradientCollector gc = trainer.newGradientCollector()) {
                        NDList logits = trainer.forward(batch.getData(), batch.getLabels());
                        NDArray l = trainer.getLoss().evaluate(batch.getLabels(), logits);
                        gc.backward(l);
                        loss = l.getFloat();
                    }
                    trainer.step();
                }
                step++;
                // the rate this step used: agree() moves the shared clock the schedule reads
                float rate = lr.getNewValue(step);
                loss = agree(trainer, loss, seconds(t0));
                curve.addTrain(step, clock, rate, loss);
                if (lead) {
                    long progress = options.steps > 0 ? step : (long) clock;
                    // DJL's bar takes a 0-based index (it shows index + 1 of the total)
                    bar.update(
                            Math.max(0, progress - 1),
                            String.format(Locale.ROOT, "step %d loss %.3f", step, loss));
                }
                boolean done =
                        (options.steps > 0 && step >= options.steps) || clock >= budgetSeconds;
                if (step % options.evalEvery == 0 && !done) {
                    double val = validation.score(trainer, options.evalBatches).loss;
                    curve.addValidation(step, val);
                    log(
                            "%nstep %d: train loss %.4f (last 50 steps), validation loss %.4f,"
                                    + " %.0f tokens/s (all ranks)",
                            step,
                            curve.recentTrainLoss(50),
                            val,
                            step
                                    * (double) options.batch
                                    * train.getContextLength()
                                    * group.getSize()
                                    / clock);
                }
                if (done) {
                    if (lead) {
                        System.out.println();
                    }
                    return step;
                }
            }
            if (step == stepsBefore) {
                // An epoch without a batch would loop for ever. Every rank's shard has the same
                // size, so every rank stops here alike.
                throw new IllegalArgumentException(
                        String.format(
                                Locale.ROOT,
                                "training split: %d windows of %d tokens for %d ranks, so none"
                                        + " in this rank's shard (expected: at least one window"
                                        + " per rank)",
                                train.size(),
                                train.getContextLength(),
                                group.getSize()));
            }
        }
    }

    /**
     * Averages this step's loss over the ranks and moves the shared clock to rank 0's {@code
     * elapsed}: one all-reduce of two numbers per step, next to nothing beside a step's compute.
     *
     * @return the mean loss
     */
    private float agree(Trainer trainer, float loss, double elapsed) {
        if (group.getSize() == 1) {
            clock = elapsed;
            return loss;
        }
        try (NDManager m = trainer.getManager().newSubManager()) {
            // Only rank 0 contributes its time, so the sum is rank 0's clock.
            NDArray sums = m.create(new double[] {loss, lead ? elapsed : 0});
            group.allReduce(sums, ReduceOp.SUM);
            double[] v = sums.toDoubleArray();
            clock = v[1];
            return (float) (v[0] / group.getSize());
        }
    }

    /**
     * Checks that data-parallel training kept every replica identical, as DDP promises: a checksum
     * of the parameters' bits must agree on every rank.
     *
     * @return the checksum
     * @throws IllegalStateException if a rank's parameters differ from rank 0's
     */
    long checkReplicas(GptModel block) {
        long checksum = checksum(block);
        if (group.getSize() == 1) {
            return checksum;
        }
        byte[] mine = ByteBuffer.allocate(Long.BYTES).putLong(checksum).array();
        List<byte[]> all = group.objects().allGather(mine);
        for (int r = 0; r < all.size(); r++) {
            long theirs = ByteBuffer.wrap(all.get(r)).getLong();
            if (theirs != checksum) {
                throw new IllegalStateException(
                        String.format(
                                Locale.ROOT,
                                "parameters differ across ranks after training: rank %d has"
                                        + " checksum %016x, rank %d %016x (expected: identical"
                                        + " replicas)",
                                group.getRank(),
                                checksum,
                                r,
                                theirs));
            }
        }
        log("parameters identical on all %d ranks (checksum %016x)", all.size(), checksum);
        return checksum;
    }

    /** A checksum of a model's parameters' bits, in definition order. */
    static long checksum(GptModel block) {
        long checksum = 17;
        for (Parameter p : block.getParameters().values()) {
            for (float v : p.getArray().toFloatArray()) {
                checksum = checksum * 1_000_003L + Float.floatToRawIntBits(v);
            }
        }
        return checksum;
    }

    /** Generates the sample from a model holding full parameters. */
    String sample(Model model, GptModel block) {
        GptGenerator generator =
                GptGenerator.builder(block)
                        .optTemperature(options.temperature)
                        .optTopK(options.topK)
                        .build();
        int[] ids =
                generator.generate(
                        model.getNDManager(),
                        tokenizer.encode(options.prompt),
                        options.sampleTokens,
                        options.seed);
        return tokenizer.decode(ids);
    }

    /** Prints on rank 0. */
    void log(String format, Object... args) {
        if (lead) {
            System.out.println(String.format(Locale.ROOT, format, args));
        }
    }

    private static double seconds(long since) {
        return (System.nanoTime() - since) / 1e9;
    }

    private static String quoted(String s) {
        return '"' + s + '"';
    }
}
