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
package ai.djl.distributed.transformer.bench;

import ai.djl.Model;
import ai.djl.distributed.transformer.CausalLmLoss;
import ai.djl.distributed.transformer.GptConfig;
import ai.djl.distributed.transformer.GptModel;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * Training throughput of the GPT through DJL's {@link Trainer}: forward, loss, backward and an
 * AdamW step per iteration, on one fixed batch of random tokens, as PyTorch's peer {@code
 * torch_gpt_bench.py} measures it (same arguments, same output line).
 *
 * <p>Usage: {@code GptTrainBench [layers=4] [heads=4] [width=128] [context=128] [batch=16]
 * [steps=20] [warmup=2] [vocab=256]}. Run with {@code -Dai.djl.pytorch.num_threads=1
 * -Dai.djl.pytorch.num_interop_threads=1} for one thread, as the peer. Prints {@code params=...
 * world=1 step_ms=... tokens_per_s_per_rank=... cpu_step_ms=...}: the peer's line, then the CPU
 * time of the training thread per step.
 */
public final class GptTrainBench {

    private GptTrainBench() {}

    /**
     * Runs the benchmark.
     *
     * @param args {@code key=value} arguments, as the Python peer's
     */
    public static void main(String[] args) {
        Map<String, Integer> a = parse(args, Map.of());
        GptConfig config = config(a);
        int batch = a.get("batch");
        int context = a.get("context");
        Engine.getInstance().setRandomSeed(0);
        Optimizer adamW = peerAdamW();
        try (Model model = Model.newInstance("gpt-bench");
                NDManager manager = NDManager.newBaseManager()) {
            model.setBlock(new GptModel(config));
            DefaultTrainingConfig tc =
                    new DefaultTrainingConfig(new CausalLmLoss()).optOptimizer(adamW);
            try (Trainer trainer = model.newTrainer(tc)) {
                trainer.initialize(new Shape(batch, context));
                NDArray[] xy = randomBatch(manager, config.getVocabSize(), batch, context, 0);
                NDArray x = xy[0];
                NDArray y = xy[1];
                for (int i = 0; i < a.get("warmup"); i++) {
                    step(trainer, manager, x, y);
                }
                int steps = a.get("steps");
                ThreadMXBean threads = ManagementFactory.getThreadMXBean();
                long cpu0 = threads.getCurrentThreadCpuTime();
                long t0 = System.nanoTime();
                for (int i = 0; i < steps; i++) {
                    step(trainer, manager, x, y);
                }
                double seconds = (System.nanoTime() - t0) / 1e9 / steps;
                double cpuSeconds = (threads.getCurrentThreadCpuTime() - cpu0) / 1e9 / steps;
                // the peer's fields first, then this thread's CPU time per step (less sensitive to
                // other load on the machine than the wall-clock step time)
                System.out.printf(
                        Locale.ROOT,
                        "params=%d world=1 step_ms=%.1f tokens_per_s_per_rank=%.0f cpu_step_ms=%.1f%n",
                        config.paramCount(),
                        seconds * 1e3,
                        batch * context / seconds,
                        cpuSeconds * 1e3);
            }
        }
    }

    /**
     * One training step on a fixed batch: forward, loss, backward (recorded as the trainer's {@code
     * forward-backward} metric when it keeps metrics), then the trainer's step.
     *
     * @param trainer the trainer
     * @param manager the manager under which the step's arrays live until the step ends
     * @param x the input tokens, not consumed
     * @param y the target tokens, not consumed
     */
    public static void step(Trainer trainer, NDManager manager, NDArray x, NDArray y) {
        // every array of the step lives in this sub-manager, released once the step is done
        try (NDManager step = manager.newSubManager()) {
            NDArray xs = x.duplicate();
            NDArray ys = y.duplicate();
            xs.attach(step);
            ys.attach(step);
            long begin = System.nanoTime();
            try (GradientCollector gc = trainer.newGradientCollector()) {
                NDList logits = trainer.forward(new NDList(xs));
                NDArray loss = trainer.getLoss().evaluate(new NDList(ys), logits);
                gc.backward(loss);
            }
            trainer.addMetric("forward-backward", begin);
            trainer.step();
        }
    }

    /**
     * Parses the peer's {@code key=value} arguments over its defaults (layers=4 heads=4 width=128
     * context=128 batch=16 steps=20 warmup=2 vocab=256) and {@code extraDefaults}.
     *
     * @param args the arguments
     * @param extraDefaults further keys a caller accepts, with their defaults
     * @return every key's value
     * @throws IllegalArgumentException for an argument that is not {@code key=value} of a known key
     *     and an integer, or a value out of range (steps below 1, warmup below 0, a size below 1),
     *     naming the argument
     */
    public static Map<String, Integer> parse(String[] args, Map<String, Integer> extraDefaults) {
        Map<String, Integer> a = new LinkedHashMap<>();
        a.put("layers", 4);
        a.put("heads", 4);
        a.put("width", 128);
        a.put("context", 128);
        a.put("batch", 16);
        a.put("steps", 20);
        a.put("warmup", 2);
        a.put("vocab", 256);
        a.putAll(extraDefaults);
        for (String arg : args) {
            String[] kv = arg.split("=", 2);
            if (kv.length != 2 || !a.containsKey(kv[0])) {
                throw new IllegalArgumentException(
                        "argument: "
                                + arg
                                + " (expected: key=value with key in "
                                + a.keySet()
                                + ")");
            }
            try {
                a.put(kv[0], Integer.parseInt(kv[1].trim()));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(
                        "argument: " + arg + " (expected: " + kv[0] + "=an integer)", e);
            }
        }
        for (String key : List.of("layers", "heads", "width", "context", "batch", "vocab")) {
            atLeast(a, key, 1);
        }
        atLeast(a, "steps", 1);
        atLeast(a, "warmup", 0);
        return a;
    }

    /**
     * Checks that a parsed argument is at least {@code min}.
     *
     * @param a the arguments, as {@link #parse} returns them
     * @param key the argument's key
     * @param min its smallest value
     * @throws IllegalArgumentException naming the key, its value and the bound if it is below
     */
    public static void atLeast(Map<String, Integer> a, String key, int min) {
        int value = a.get(key);
        if (value < min) {
            throw new IllegalArgumentException(
                    "argument: " + key + "=" + value + " (expected: " + key + " >= " + min + ")");
        }
    }

    /**
     * Returns the model configuration the arguments describe.
     *
     * @param a the parsed arguments
     * @return the configuration
     */
    public static GptConfig config(Map<String, Integer> a) {
        return GptConfig.builder()
                .setVocabSize(a.get("vocab"))
                .setContextLength(a.get("context"))
                .setLayers(a.get("layers"))
                .setHeads(a.get("heads"))
                .setWidth(a.get("width"))
                .build();
    }

    /**
     * Returns the peer's optimizer: {@code torch.optim.AdamW(lr=3e-4)}, its defaults otherwise.
     *
     * @return the optimizer
     */
    public static Optimizer peerAdamW() {
        return Optimizer.adamW()
                .optLearningRateTracker(Tracker.fixed(3e-4f))
                .optWeightDecays(0.01f)
                .optBeta1(0.9f)
                .optBeta2(0.999f)
                .optEpsilon(1e-8f)
                .build();
    }

    /**
     * Returns one batch of random tokens and its next-token labels.
     *
     * @param manager where the arrays live
     * @param vocab the vocabulary size
     * @param batch the batch size
     * @param context the context length
     * @param seed the random seed
     * @return {inputs, labels}, each (batch, context)
     */
    public static NDArray[] randomBatch(
            NDManager manager, int vocab, int batch, int context, long seed) {
        long[] tokens = new long[batch * (context + 1)];
        Random random = new Random(seed);
        for (int i = 0; i < tokens.length; i++) {
            tokens[i] = random.nextInt(vocab);
        }
        NDArray all = manager.create(tokens, new Shape(batch, context + 1));
        return new NDArray[] {all.get(":, :-1"), all.get(":, 1:")};
    }
}
