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
import java.util.Locale;
import java.util.Set;

/**
 * The command line of {@code ddp_basics}: {@code --name value} (or {@code --name=value}) pairs,
 * each optional. Immutable once parsed.
 */
public final class DdpBasicsOptions {

    /** The options, their defaults and meaning, as {@code --help} prints them. */
    public static final String USAGE =
            String.join(
                    "\n",
                    "options (all optional):",
                    "  --epochs N        epochs to train, in all (default 8)",
                    "  --batch B         samples per rank per step (default 32)",
                    "  --samples N       training samples, shared among the ranks (default 6000)",
                    "  --lr LR           Adam's learning rate (default 0.01)",
                    "  --hook NAME       gradient reduction: allreduce (default) or fp16",
                    "  --seed S          seed of the data, initialisation and shuffling (default 7)",
                    "  --checkpoint DIR  rank 0 writes DIR/ddp.ckpt after every epoch",
                    "  --resume          resume from DIR/ddp.ckpt when it exists",
                    "  --overlap         reductions overlap the next forward pass",
                    "  --quiet           no progress bar");

    private static final Set<String> FLAGS = Set.of("--resume", "--quiet", "--overlap");

    int epochs = 8;
    int batch = 32;
    int samples = 6000;
    float lr = 0.01f;
    String hook = "allreduce";
    int seed = 7;
    Path checkpoint;
    boolean resume;
    boolean overlap;
    boolean quiet;

    private DdpBasicsOptions() {}

    /**
     * Parses the command line.
     *
     * @param args the arguments
     * @return the options
     * @throws IllegalArgumentException on an unknown option, a missing or malformed value
     */
    public static DdpBasicsOptions parse(String... args) {
        DdpBasicsOptions o = new DdpBasicsOptions();
        OptionPairs.parse(args, FLAGS, o::set);
        if (o.resume && o.checkpoint == null) {
            throw new IllegalArgumentException("--resume: no --checkpoint DIR to resume from");
        }
        return o;
    }

    private void set(String name, String value) {
        try {
            switch (name) {
                case "--resume" -> resume = true;
                case "--quiet" -> quiet = true;
                case "--overlap" -> overlap = true;
                case "--epochs" -> epochs = positive(name, Integer.parseInt(value));
                case "--batch" -> batch = positive(name, Integer.parseInt(value));
                case "--samples" -> samples = positive(name, Integer.parseInt(value));
                case "--lr" -> lr = Float.parseFloat(value);
                case "--seed" -> seed = Integer.parseInt(value);
                case "--checkpoint" -> checkpoint = Path.of(value);
                case "--hook" -> {
                    hook = value.toLowerCase(Locale.ROOT);
                    if (!hook.equals("allreduce") && !hook.equals("fp16")) {
                        throw new IllegalArgumentException(
                                "--hook: " + value + " (expected: allreduce or fp16)");
                    }
                }
                default ->
                        throw new IllegalArgumentException(
                                "unknown option: " + name + "\n" + USAGE);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: a number)", e);
        }
    }

    private static int positive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: > 0)");
        }
        return v;
    }
}
