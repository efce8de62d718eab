package ai.djl.distributed.examples;

import ai.djl.Model;
import ai.djl.distributed.rendezvous.DistributedEnv;
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
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.util.ProgressBar;
import ai.djl.translate.TranslateException;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * {@code transformer_basics}: trains the {@code mini} GPT on the Europarl corpus in one process,
 * then samples text from it.
 *
 * <p>Logs training and validation loss beside the unigram baseline (the loss of a model that
 * ignores context), and writes into the output directory: {@code loss.csv}, {@code loss.png}, the
 * model with its tokenizer ({@code model/}, a {@link GptCheckpoint}) and the generated {@code
 * sample.txt}. Under a launcher only rank 0 prints and writes. {@code --help} lists the options
 * ({@link GptTrainOptions#USAGE}).
 */
public final class TransformerBasics {

    private final GptTrainOptions options;
    private final boolean lead;

    private TransformerBasics(GptTrainOptions options, boolean lead) {
        this.options = options;
        this.lead = lead;
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
            System.out.println("usage: transformer_basics [options]\n" + GptTrainOptions.USAGE);
            return;
        }
        runExample(args);
    }

    /**
     * Runs the example.
     *
     * @param args the options, as on the command line
     * @return what the run measured and wrote
     * @throws IOException if the corpus cannot be read or the outputs cannot be written
     * @throws TranslateException if the dataset fails to produce a batch
     */
    public static GptRunResult runExample(String... args) throws IOException, TranslateException {
        GptTrainOptions options = GptTrainOptions.parse(args);
        int rank = DistributedEnv.fromProcess().getInt("RANK").orElse(0);
        return new TransformerBasics(options, rank == 0).run();
    }

    private GptRunResult run() throws IOException, TranslateException {
        long start = System.nanoTime();
        Engine.getInstance().setRandomSeed(options.seed);
        TrainingData data = TrainingData.prepare(options.tokenizer, options.vocab, options.maxDocs);
        Tokenizer tokenizer = data.getTokenizer();
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

        TokenWindowDataset train =
                TokenWindowDataset.builder()
                        .setTokens(data.getTrain())
                        .setContextLength(context)
                        .setSampling(options.batch, true, true)
                        .build();
        Validation validation =
                new Validation(
                        TokenWindowDataset.builder()
                                .setTokens(data.getValidation())
                                .setContextLength(context)
                                .setSampling(options.batch, false)
                                .build(),
                        options.batch);

        Files.createDirectories(options.out);
        LossCurve curve = new LossCurve();
        long budgetNanos = (long) (options.minutes * 60e9);
        long[] trainStart = {0};
        WarmupCosineTracker lr =
                new WarmupCosineTracker(
                        options.lr,
                        options.warmup,
                        options.steps,
                        () -> (double) (System.nanoTime() - trainStart[0]) / budgetNanos);
        DefaultTrainingConfig tc =
                new DefaultTrainingConfig(new CausalLmLoss())
                        .optOptimizer(
                                Optimizer.adamW()
                                        .optLearningRateTracker(lr)
                                        .optWeightDecays(options.weightDecay)
                                        .build());
        try (Model model = Model.newInstance("gpt")) {
            GptModel block = new GptModel(config);
            model.setBlock(block);
            try (Trainer trainer = model.newTrainer(tc)) {
                trainer.initialize(new Shape(options.batch, context));
                trainStart[0] = System.nanoTime();
                int steps =
                        train(trainer, train, validation, curve, lr, trainStart[0], budgetNanos);
                double trainSeconds = (System.nanoTime() - trainStart[0]) / 1e9;

                Validation.Score fin = validation.score(trainer, options.finalEvalBatches);
                double sameTokens =
                        UnigramBaseline.crossEntropy(
                                data.getTrain(), fin.targets, tokenizer.vocabSize());
                log(
                        "final: validation loss %.4f on %,d tokens; unigram baseline %.4f on the"
                                + " same tokens, %.4f on the whole validation split",
                        fin.loss, fin.targets.length, sameTokens, data.getUnigramBaseline());
                curve.addValidation(steps, fin.loss);

                String sample = sample(model, block, tokenizer);
                Path modelDir = options.out.resolve("model");
                if (lead) {
                    curve.writeCsv(options.out.resolve("loss.csv"));
                    curve.writePng(
                            options.out.resolve("loss.png"),
                            String.format(
                                    Locale.ROOT,
                                    "transformer_basics: %s GPT, %d steps, %.0f s",
                                    options.preset,
                                    steps,
                                    trainSeconds),
                            sameTokens);
                    GptCheckpoint.save(modelDir, model, tokenizer);
                    Files.writeString(
                            options.out.resolve("sample.txt"), sample, StandardCharsets.UTF_8);
                }
                log("sample (prompt %s):%n%s", quoted(options.prompt), sample);
                log(
                        "wrote %s (loss.csv, loss.png, model/, sample.txt); %.1f s in all",
                        options.out, seconds(start));
                return new GptRunResult(
                        steps,
                        (long) steps * options.batch * context,
                        trainSeconds,
                        seconds(start),
                        curve.recentTrainLoss(50),
                        fin.loss,
                        sameTokens,
                        data.getUnigramBaseline(),
                        sample,
                        options.out,
                        modelDir);
            }
        }
    }

    private int train(
            Trainer trainer,
            TokenWindowDataset train,
            Validation validation,
            LossCurve curve,
            WarmupCosineTracker lr,
            long t0,
            long budgetNanos)
            throws IOException, TranslateException {
        ProgressBar bar =
                new ProgressBar(
                        "Training",
                        options.steps > 0 ? options.steps : (long) (options.minutes * 60));
        int step = 0;
        while (true) {
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
                long elapsed = System.nanoTime() - t0;
                curve.addTrain(step, elapsed / 1e9, lr.getNewValue(step), loss);
                if (lead) {
                    long progress = options.steps > 0 ? step : elapsed / 1_000_000_000L;
                    bar.update(
                            progress, String.format(Locale.ROOT, "step %d loss %.3f", step, loss));
                }
                boolean done =
                        (options.steps > 0 && step >= options.steps) || elapsed >= budgetNanos;
                if (step % options.evalEvery == 0 && !done) {
                    double val = validation.score(trainer, options.evalBatches).loss;
                    curve.addValidation(step, val);
                    log(
                            "%nstep %d: train loss %.4f (last 50 steps), validation loss %.4f,"
                                    + " %.0f tokens/s",
                            step,
                            curve.recentTrainLoss(50),
                            val,
                            step
                                    * (double) options.batch
                                    * train.getContextLength()
                                    * 1e9
                                    / (System.nanoTime() - t0));
                }
                if (done) {
                    if (lead) {
                        System.out.println();
                    }
                    return step;
                }
            }
        }
    }

    private String sample(Model model, GptModel block, Tokenizer tokenizer) {
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

    private void log(String format, Object... args) {
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
