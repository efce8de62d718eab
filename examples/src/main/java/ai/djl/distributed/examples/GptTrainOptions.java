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

import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Locale;
import java.util.Set;

/**
 * The command line of the GPT training examples: {@code --name value} (or {@code --name=value})
 * pairs, each optional. Immutable once parsed.
 */
public final class GptTrainOptions {

    /** The options, their defaults and meaning, as {@code --help} prints them. */
    public static final String USAGE =
            String.join(
                    "\n",
                    "options (all optional):",
                    "  --preset NAME        model shape: mini (default) or tiny",
                    "  --minutes M          training time budget in minutes (default 4)",
                    "  --steps N            stop after N steps too (default 0: time only)",
                    "  --batch B            sequences per step (default 16)",
                    "  --lr LR              peak learning rate of AdamW (default 2e-3)",
                    "  --warmup N           linear warm-up steps (default 100)",
                    "  --weight-decay WD    AdamW weight decay (default 0.01)",
                    "  --dropout P          dropout rate (default 0)",
                    "  --tokenizer KIND     bpe (default) or byte",
                    "  --vocab V            BPE vocabulary size (default 512)",
                    "  --max-docs N         read only the first N corpus documents (default all)",
                    "  --eval-every N       validation every N steps (default 100)",
                    "  --eval-batches N     batches per periodic validation (default 8)",
                    "  --final-eval-batches N  batches for the final validation (default 64)",
                    "  --prompt TEXT        prompt of the generated sample (default \"Mr President,\")",
                    "  --sample-tokens N    tokens to generate (default 200)",
                    "  --temperature T      sampling temperature (default 0.8)",
                    "  --top-k K            sample among the K most likely tokens (default 40)",
                    "  --seed S             seed of initialisation, data order and sampling (default 42)",
                    "  --out DIR            output directory (default out/transformer_basics)");

    String preset = "mini";
    double minutes = 4;
    int steps;
    int batch = 16;
    float lr = 2e-3f;
    int warmup = 100;
    float weightDecay = 0.01f;
    float dropout;
    String tokenizer = "bpe";
    int vocab = 512;
    int maxDocs = Integer.MAX_VALUE;
    int evalEvery = 100;
    int evalBatches = 8;
    int finalEvalBatches = 64;
    String prompt = "Mr President,";
    int sampleTokens = 200;
    float temperature = 0.8f;
    int topK = 40;
    int seed = 42;
    Path out = Paths.get("out", "transformer_basics");

    private GptTrainOptions() {}

    /**
     * Parses the command line.
     *
     * @param args the arguments
     * @return the options
     * @throws IllegalArgumentException on an unknown option, a missing or malformed value
     */
    public static GptTrainOptions parse(String... args) {
        GptTrainOptions o = new GptTrainOptions();
        OptionPairs.parse(
                args,
                Set.of(),
                (name, value) -> {
                    try {
                        o.set(name, value);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException(
                                name + ": " + value + " (expected: a number)\n" + USAGE, e);
                    }
                });
        o.check();
        return o;
    }

    private void set(String name, String value) {
        switch (name) {
            case "--preset":
                preset = value.toLowerCase(Locale.ROOT);
                break;
            case "--minutes":
                minutes = Double.parseDouble(value);
                break;
            case "--steps":
                steps = Integer.parseInt(value);
                break;
            case "--batch":
                batch = Integer.parseInt(value);
                break;
            case "--lr":
                lr = Float.parseFloat(value);
                break;
            case "--warmup":
                warmup = Integer.parseInt(value);
                break;
            case "--weight-decay":
                weightDecay = Float.parseFloat(value);
                break;
            case "--dropout":
                dropout = Float.parseFloat(value);
                break;
            case "--tokenizer":
                tokenizer = value.toLowerCase(Locale.ROOT);
                break;
            case "--vocab":
                vocab = Integer.parseInt(value);
                break;
            case "--max-docs":
                maxDocs = Integer.parseInt(value);
                break;
            case "--eval-every":
                evalEvery = Integer.parseInt(value);
                break;
            case "--eval-batches":
                evalBatches = Integer.parseInt(value);
                break;
            case "--final-eval-batches":
                finalEvalBatches = Integer.parseInt(value);
                break;
            case "--prompt":
                prompt = value;
                break;
            case "--sample-tokens":
                sampleTokens = Integer.parseInt(value);
                break;
            case "--temperature":
                temperature = Float.parseFloat(value);
                break;
            case "--top-k":
                topK = Integer.parseInt(value);
                break;
            case "--seed":
                seed = Integer.parseInt(value);
                break;
            case "--out":
                out = Paths.get(value);
                break;
            default:
                throw new IllegalArgumentException("unknown option: " + name + "\n" + USAGE);
        }
    }

    private void check() {
        positive("--minutes", minutes);
        positive("--batch", batch);
        positive("--lr", lr);
        positive("--eval-every", evalEvery);
        positive("--eval-batches", evalBatches);
        positive("--final-eval-batches", finalEvalBatches);
        if (steps < 0 || warmup < 0 || sampleTokens < 0 || topK < 0 || weightDecay < 0) {
            throw new IllegalArgumentException(
                    "--steps, --warmup, --sample-tokens, --top-k, --weight-decay: negative"
                            + " (expected: >= 0)");
        }
        if (!"bpe".equals(tokenizer) && !"byte".equals(tokenizer)) {
            throw new IllegalArgumentException(
                    "--tokenizer: " + tokenizer + " (expected: bpe or byte)");
        }
        if (prompt.isEmpty()) {
            throw new IllegalArgumentException("--prompt: empty (expected: some text)");
        }
    }

    private static void positive(String name, double value) {
        if (!(value > 0)) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: > 0)");
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
