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

import ai.djl.distributed.transformer.GptConfig;
import ai.djl.distributed.transformer.data.ByteTokenizer;
import ai.djl.distributed.transformer.data.EuroparlCorpus;

import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;

/**
 * The options of the GPT training examples, each optional: a picocli mixin, so that another example
 * adds its own options beside these ({@code @Mixin GptTrainOptions gpt;} in its options class, then
 * {@link #check()} after parsing). {@link #parse} reads {@code transformer_basics}'s command line.
 * Not thread-safe while picocli fills it; not changed afterwards.
 */
public final class GptTrainOptions {

    /** The options, their defaults and meaning, as {@code --help} prints them. */
    public static final String USAGE =
            ExampleCommandLine.usage(new GptTrainOptions(), "usage: transformer_basics [options]");

    @Option(
            names = "--preset",
            paramLabel = "NAME",
            description = "model shape: tiny, mini or small (default ${DEFAULT-VALUE})")
    String preset = "mini";

    @Option(
            names = "--minutes",
            paramLabel = "M",
            description = "training time budget in minutes (default 4)")
    double minutes = 4;

    @Option(
            names = "--steps",
            paramLabel = "N",
            description = "stop after N steps too (default 0: time only)")
    int steps;

    @Option(
            names = "--batch",
            paramLabel = "B",
            description = "sequences per step (default ${DEFAULT-VALUE})")
    int batch = 16;

    @Option(
            names = "--lr",
            paramLabel = "LR",
            description = "peak learning rate of AdamW (default 2e-3)")
    float lr = 2e-3f;

    @Option(
            names = "--warmup",
            paramLabel = "N",
            description = "linear warm-up steps (default ${DEFAULT-VALUE})")
    int warmup = 100;

    @Option(
            names = "--weight-decay",
            paramLabel = "WD",
            description = "AdamW weight decay (default 0.01)")
    float weightDecay = 0.01f;

    @Option(names = "--dropout", paramLabel = "P", description = "dropout rate (default 0)")
    float dropout;

    @Option(names = "--tokenizer", paramLabel = "KIND", description = "bpe (default) or byte")
    String tokenizer = "bpe";

    @Option(names = "--vocab", paramLabel = "V", description = "BPE vocabulary size (default 512)")
    int vocab = 512;

    @Option(
            names = "--max-docs",
            paramLabel = "N",
            description = "read only the first N corpus documents (default all)")
    int maxDocs = Integer.MAX_VALUE;

    @Option(
            names = "--eval-every",
            paramLabel = "N",
            description = "validation every N steps (default 100)")
    int evalEvery = 100;

    @Option(
            names = "--eval-batches",
            paramLabel = "N",
            description = "batches per periodic validation (default 8)")
    int evalBatches = 8;

    @Option(
            names = "--final-eval-batches",
            paramLabel = "N",
            description = "batches for the final validation (default 64)")
    int finalEvalBatches = 64;

    @Option(
            names = "--prompt",
            paramLabel = "TEXT",
            description = "prompt of the generated sample (default \"Mr President,\")")
    String prompt = "Mr President,";

    @Option(
            names = "--sample-tokens",
            paramLabel = "N",
            description = "tokens to generate (default 200)")
    int sampleTokens = 200;

    @Option(
            names = "--temperature",
            paramLabel = "T",
            description = "sampling temperature (default 0.8)")
    float temperature = 0.8f;

    @Option(
            names = "--top-k",
            paramLabel = "K",
            description = "sample among the K most likely tokens (default 40)")
    int topK = 40;

    @Option(
            names = "--seed",
            paramLabel = "S",
            description = "seed of initialisation, data order and sampling (default 42)")
    int seed = 42;

    @Option(
            names = "--out",
            paramLabel = "DIR",
            description = "output directory (default ${DEFAULT-VALUE})")
    Path out = Paths.get("out", "transformer_basics");

    /** Creates the options at their defaults, for picocli to fill (as a mixin, for instance). */
    public GptTrainOptions() {}

    /**
     * Parses {@code transformer_basics}'s command line.
     *
     * @param args the arguments
     * @return the options
     * @throws IllegalArgumentException on an unknown option, a missing or malformed value
     */
    public static GptTrainOptions parse(String... args) {
        GptTrainOptions o =
                ExampleCommandLine.parse(
                        new GptTrainOptions(), "usage: transformer_basics [options]", args);
        o.check();
        return o;
    }

    /**
     * Checks the values against each other and their ranges; lower-cases the names of the preset
     * and tokenizer. A command that mixes these options in calls it after parsing.
     *
     * @throws IllegalArgumentException naming the first bad option, its value and what was expected
     */
    public void check() {
        preset = preset.toLowerCase(Locale.ROOT);
        tokenizer = tokenizer.toLowerCase(Locale.ROOT);
        finitePositive("--minutes", minutes);
        positive("--batch", batch);
        finitePositive("--lr", lr);
        positive("--eval-every", evalEvery);
        positive("--eval-batches", evalBatches);
        positive("--final-eval-batches", finalEvalBatches);
        atLeast("--steps", steps, 0, "");
        atLeast("--warmup", warmup, 0, "");
        atLeast("--sample-tokens", sampleTokens, 0, "");
        atLeast("--top-k", topK, 0, "");
        if (!(weightDecay >= 0) || Float.isInfinite(weightDecay)) {
            throw new IllegalArgumentException(
                    "--weight-decay: " + weightDecay + " (expected: finite, >= 0)");
        }
        if (!"bpe".equals(tokenizer) && !"byte".equals(tokenizer)) {
            throw new IllegalArgumentException(
                    "--tokenizer: " + tokenizer + " (expected: bpe or byte)");
        }
        // Refused here, not part way through the run: a bad --temperature would otherwise fail
        // only after training, before the model is written.
        try {
            GptConfig.preset(preset);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "--preset: " + preset + " (expected: tiny, mini or small)", e);
        }
        if (!(dropout >= 0 && dropout < 1)) {
            throw new IllegalArgumentException("--dropout: " + dropout + " (expected: [0, 1))");
        }
        if (!(temperature >= 0) || Float.isInfinite(temperature)) {
            throw new IllegalArgumentException(
                    "--temperature: " + temperature + " (expected: finite, >= 0)");
        }
        if ("bpe".equals(tokenizer)) {
            atLeast("--vocab", vocab, ByteTokenizer.VOCAB_SIZE, "");
        }
        atLeast(
                "--max-docs",
                maxDocs,
                EuroparlCorpus.VALIDATION_EVERY,
                ", so that both splits have a document");
        if (prompt.isEmpty()) {
            throw new IllegalArgumentException("--prompt: empty (expected: some text)");
        }
    }

    private static void atLeast(String name, int value, int min, String why) {
        if (value < min) {
            throw new IllegalArgumentException(
                    name + ": " + value + " (expected: >= " + min + why + ")");
        }
    }

    private static void positive(String name, int value) {
        if (value <= 0) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
        }
    }

    private static void finitePositive(String name, float value) {
        if (!(value > 0) || Float.isInfinite(value)) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: finite, > 0)");
        }
    }

    private static void finitePositive(String name, double value) {
        if (!(value > 0) || Double.isInfinite(value)) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: finite, > 0)");
        }
    }

    /**
     * Returns the output directory.
     *
     * @return the directory where the run writes its files
     */
    public Path getOut() {
        return out;
    }
}
