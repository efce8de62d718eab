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

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.ddp.CommHooks;
import ai.djl.distributed.ddp.DdpCheckpoint;
import ai.djl.distributed.ddp.DistributedDataParallel;
import ai.djl.distributed.parallel.DistributedSampler;
import ai.djl.distributed.pg.Distributed;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.pg.ProcessGroups;
import ai.djl.engine.Engine;
import ai.djl.metric.Metrics;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.EasyTrain;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.evaluator.Accuracy;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.translate.TranslateException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * {@code ddp_basics}: a small classifier trained data-parallel on N processes, {@code bin/djlrun
 * --nproc-per-node N ddp_basics}, as PyTorch's DDP tutorial does. An MLP learns three spiral arms
 * from generated points ({@link DdpSpiralData}); each rank trains on its share of every epoch
 * ({@link DistributedSampler}) through DJL's {@code EasyTrain.fit}, with a {@link
 * DistributedDataParallel} trainer in place of {@code model.newTrainer}. Rank 0 alone prints the
 * per-epoch loss and accuracy, averaged over the ranks, shows the progress bar and writes
 * checkpoints; {@code --resume} continues from the last one.
 *
 * <p>Run without a launcher it trains alone (a world of one). {@code --help} lists the options.
 */
public final class DdpBasics {

    /**
     * One epoch's evaluations, averaged over the ranks.
     *
     * @param epoch the epoch, from 1
     * @param trainLoss the training loss
     * @param trainAccuracy the training accuracy
     * @param validationLoss the validation loss
     * @param validationAccuracy the validation accuracy
     */
    public record Epoch(
            int epoch,
            float trainLoss,
            float trainAccuracy,
            float validationLoss,
            float validationAccuracy) {}

    /**
     * What a run measured.
     *
     * @param worldSize the number of ranks
     * @param epochs the epochs this run trained (after a resume, only the later ones)
     * @param parameters the trained parameters, flattened in definition order
     */
    public record Result(int worldSize, List<Epoch> epochs, float[] parameters) {}

    private final DdpBasicsOptions options;
    private final ProcessGroup group;

    private DdpBasics(DdpBasicsOptions options, ProcessGroup group) {
        this.options = options;
        this.group = group;
    }

    /**
     * Runs the example from the command line.
     *
     * @param args the options
     * @throws IOException if a checkpoint cannot be written or read
     * @throws TranslateException if the dataset fails to produce a batch
     */
    public static void main(String[] args) throws IOException, TranslateException {
        if (args.length > 0 && ("--help".equals(args[0]) || "-h".equals(args[0]))) {
            System.out.println(DdpBasicsOptions.USAGE);
            return;
        }
        run(ExampleCommandLine.parseOrExit("ddp_basics", () -> DdpBasicsOptions.parse(args)));
    }

    /**
     * Runs the example: under a launcher (WORLD_SIZE set) as one rank of the job, else alone.
     *
     * @param args the options, as on the command line
     * @return what the run measured
     * @throws IOException if a checkpoint cannot be written or read
     * @throws TranslateException if the dataset fails to produce a batch
     */
    public static Result runExample(String... args) throws IOException, TranslateException {
        return run(DdpBasicsOptions.parse(args));
    }

    private static Result run(DdpBasicsOptions options) throws IOException, TranslateException {
        // On GPUs as PyTorch users set it up: NCCL for the GPU arrays, the CPU backend for the
        // rest.
        String backend = options.device.equals("gpu") ? "cpu:cpu,gpu:nccl" : "cpu";
        return ExampleGroup.run(
                backend,
                ProcessGroups.DEFAULT_TIMEOUT,
                group -> new DdpBasics(options, group).run());
    }

    private Result run() throws IOException, TranslateException {
        Engine.getInstance().setRandomSeed(options.seed);
        Device device = options.device.equals("gpu") ? Distributed.localDevice() : Device.cpu();
        if (!device.isGpu() && options.device.equals("gpu")) {
            throw new IllegalStateException(
                    "--device gpu: DJL's engine sees no GPU here (expected: a CUDA build of"
                            + " PyTorch's natives and a GPU)");
        }
        DistributedSampler trainSampler =
                DistributedSampler.builder()
                        .setBatchSize(options.batch)
                        .setProcessGroup(group)
                        .optSeed(options.seed)
                        .build();
        // Evaluation sees every validation point once: no shuffling, no padding.
        DistributedSampler validationSampler =
                DistributedSampler.builder()
                        .setBatchSize(options.batch)
                        .setProcessGroup(group)
                        .optShuffle(false)
                        .optPad(false)
                        .build();
        DefaultTrainingConfig config =
                new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                        .addEvaluator(new Accuracy())
                        .optOptimizer(
                                Optimizer.adam()
                                        .optLearningRateTracker(Tracker.fixed(options.lr))
                                        .build())
                        .optDevices(new Device[] {device})
                        .addTrainingListeners(
                                options.quiet
                                        ? TrainingListener.Defaults.basic()
                                        : TrainingListener.Defaults.logging());
        try (NDManager manager = NDManager.newBaseManager(Device.cpu());
                Model model = Model.newInstance("ddp_basics", device)) {
            ArrayDataset train =
                    DdpSpiralData.generate(manager, options.samples, options.seed, trainSampler);
            ArrayDataset validation =
                    DdpSpiralData.generate(
                            manager, options.samples / 4, options.seed + 1L, validationSampler);
            model.setBlock(mlp());
            try (DistributedDataParallel trainer =
                    DistributedDataParallel.builder()
                            .setModel(model)
                            .setTrainingConfig(config)
                            .setProcessGroup(group)
                            .optCommHook(
                                    "fp16".equals(options.hook)
                                            ? CommHooks.fp16Compress()
                                            : CommHooks.allReduce())
                            .optOverlapWithForward(options.overlap)
                            .build()) {
                trainer.setMetrics(new Metrics());
                trainer.initialize(new Shape(options.batch, DdpSpiralData.FEATURES));
                Path checkpoint =
                        options.checkpoint == null ? null : options.checkpoint.resolve("ddp.ckpt");
                int start = resume(trainer, checkpoint);
                trainSampler.setEpoch(start);
                log(
                        "ddp_basics: %d rank(s), %d training samples (%d per rank), batch %d per"
                                + " rank, %s gradients",
                        group.getSize(),
                        options.samples,
                        trainSampler.getNumSamples(options.samples),
                        options.batch,
                        options.hook);
                List<Epoch> epochs = new ArrayList<>();
                for (int e = start; e < options.epochs; e++) {
                    long t0 = System.nanoTime();
                    EasyTrain.fit(trainer, 1, train, validation);
                    Map<String, Float> ev = trainer.getTrainingResult().getEvaluations();
                    Epoch epoch =
                            new Epoch(
                                    e + 1,
                                    ev.get("train_loss"),
                                    ev.get("train_Accuracy"),
                                    ev.get("validate_loss"),
                                    ev.get("validate_Accuracy"));
                    epochs.add(epoch);
                    log(
                            "epoch %d/%d: train loss %.4f, accuracy %.3f | validation loss %.4f,"
                                    + " accuracy %.3f (%.1f s)",
                            epoch.epoch(),
                            options.epochs,
                            epoch.trainLoss(),
                            epoch.trainAccuracy(),
                            epoch.validationLoss(),
                            epoch.validationAccuracy(),
                            (System.nanoTime() - t0) / 1e9);
                    if (checkpoint != null) {
                        DdpCheckpoint.save(trainer, checkpoint, Map.of("epoch", "" + (e + 1)));
                    }
                }
                return new Result(group.getSize(), epochs, flatten(model.getBlock()));
            }
        }
    }

    /** Loads the checkpoint when asked and rank 0 has one; returns the epoch to start from. */
    private int resume(DistributedDataParallel trainer, Path checkpoint) throws IOException {
        if (!options.resume) {
            return 0;
        }
        byte[] exists = {(byte) (group.getRank() == 0 && Files.exists(checkpoint) ? 1 : 0)};
        if (group.getSize() > 1) {
            exists = group.objects().broadcast(exists, 0);
        }
        if (exists[0] == 0) {
            log("no checkpoint at %s: starting afresh", checkpoint);
            return 0;
        }
        int epoch = Integer.parseInt(DdpCheckpoint.load(trainer, checkpoint).get("epoch"));
        log("resumed from %s after epoch %d", checkpoint, epoch);
        return epoch;
    }

    /** 2 -> 64 -> 64 -> 3, ReLU. */
    static Block mlp() {
        return new SequentialBlock()
                .add(Linear.builder().setUnits(64).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(64).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(DdpSpiralData.CLASSES).build());
    }

    private static float[] flatten(Block block) {
        List<float[]> parts = new ArrayList<>();
        int n = 0;
        for (Parameter p : block.getParameters().values()) {
            float[] v = p.getArray().toFloatArray();
            parts.add(v);
            n += v.length;
        }
        float[] all = new float[n];
        int at = 0;
        for (float[] v : parts) {
            System.arraycopy(v, 0, all, at, v.length);
            at += v.length;
        }
        return all;
    }

    private void log(String format, Object... args) {
        if (group.getRank() == 0) {
            System.out.println(String.format(Locale.ROOT, format, args));
        }
    }
}
