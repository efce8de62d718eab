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

import picocli.CommandLine.Option;

import java.nio.file.Path;
import java.util.Locale;

/**
 * The command line of {@code ddp_basics}: {@code --name value} (or {@code --name=value}) options
 * and flags, each optional, read by picocli. Immutable once parsed.
 */
public final class DdpBasicsOptions {

    private static final String SYNOPSIS = "usage: ddp_basics [options]";

    /** The options, their defaults and meaning, as {@code --help} prints them. */
    public static final String USAGE = ExampleCommandLine.usage(new DdpBasicsOptions(), SYNOPSIS);

    @Option(
            names = "--epochs",
            paramLabel = "N",
            description = "epochs to train, in all (default 8)")
    int epochs = 8;

    @Option(
            names = "--batch",
            paramLabel = "B",
            description = "samples per rank per step (default 32)")
    int batch = 32;

    @Option(
            names = "--samples",
            paramLabel = "N",
            description = "training samples, shared among the ranks (default 6000)")
    int samples = 6000;

    @Option(names = "--lr", paramLabel = "LR", description = "Adam's learning rate (default 0.01)")
    float lr = 0.01f;

    @Option(
            names = "--hook",
            paramLabel = "NAME",
            description = "gradient reduction: allreduce (default) or fp16")
    String hook = "allreduce";

    @Option(
            names = "--seed",
            paramLabel = "S",
            description = "seed of the data, initialisation and shuffling (default 7)")
    int seed = 7;

    @Option(
            names = "--checkpoint",
            paramLabel = "DIR",
            description = "rank 0 writes DIR/ddp.ckpt after every epoch")
    Path checkpoint;

    @Option(names = "--resume", description = "resume from DIR/ddp.ckpt when it exists")
    boolean resume;

    @Option(names = "--overlap", description = "reductions overlap the next forward pass")
    boolean overlap;

    @Option(names = "--quiet", description = "no progress bar")
    boolean quiet;

    @Option(
            names = "--device",
            paramLabel = "TYPE",
            description =
                    "cpu (default), or gpu: each rank trains on GPU LOCAL_RANK, gradients"
                            + " through NCCL (backend cpu:cpu,gpu:nccl)")
    String device = "cpu";

    private DdpBasicsOptions() {}

    /**
     * Parses the command line.
     *
     * @param args the arguments
     * @return the options
     * @throws IllegalArgumentException on an unknown option, a missing or malformed value
     */
    public static DdpBasicsOptions parse(String... args) {
        DdpBasicsOptions o = ExampleCommandLine.parse(new DdpBasicsOptions(), SYNOPSIS, args);
        positive("--epochs", o.epochs);
        positive("--batch", o.batch);
        positive("--samples", o.samples);
        if (!(o.lr > 0) || Float.isInfinite(o.lr)) {
            throw new IllegalArgumentException("--lr: " + o.lr + " (expected: a finite rate > 0)");
        }
        String given = o.hook;
        o.hook = given.toLowerCase(Locale.ROOT);
        if (!o.hook.equals("allreduce") && !o.hook.equals("fp16")) {
            throw new IllegalArgumentException(
                    "--hook: " + given + " (expected: allreduce or fp16)");
        }
        String type = o.device;
        o.device = type.toLowerCase(Locale.ROOT);
        if (!o.device.equals("cpu") && !o.device.equals("gpu")) {
            throw new IllegalArgumentException("--device: " + type + " (expected: cpu or gpu)");
        }
        if (o.resume && o.checkpoint == null) {
            throw new IllegalArgumentException("--resume: no --checkpoint DIR to resume from");
        }
        return o;
    }

    private static int positive(String name, int v) {
        if (v <= 0) {
            throw new IllegalArgumentException(name + ": " + v + " (expected: > 0)");
        }
        return v;
    }
}
