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
package ai.djl.distributed.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.parallel.InPlace;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.initializer.Initializer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;
import java.util.function.Supplier;

/** A small classifier, its data and its training step, for the DDP tests. */
final class Fixture {

    static final int IN = 8;
    static final int CLASSES = 4;

    private Fixture() {}

    /** 8 -> 32 -> 16 -> 4, ReLU: six parameters, 884 floats. */
    static Block mlp() {
        return new SequentialBlock()
                .add(Linear.builder().setUnits(32).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(16).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(CLASSES).build());
    }

    static Optimizer sgd() {
        return Optimizer.sgd()
                .setLearningRateTracker(Tracker.fixed(0.1f))
                .optMomentum(0.9f)
                .optWeightDecays(1e-3f)
                .build();
    }

    static Optimizer adamW() {
        return Optimizer.adamW().optLearningRateTracker(Tracker.fixed(0.01f)).build();
    }

    static DefaultTrainingConfig config(Optimizer optimizer) {
        return new DefaultTrainingConfig(Loss.softmaxCrossEntropyLoss())
                .optOptimizer(optimizer)
                .optDevices(new Device[] {Device.cpu()});
    }

    /** An initializer drawing no random numbers: the same parameters in every run. */
    static Initializer deterministic() {
        return (manager, shape, type) -> {
            float[] v = new float[(int) shape.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (0.3 * Math.sin(1.7 * i + shape.size()));
            }
            return manager.create(v, shape).toType(type, false);
        };
    }

    /** A DDP trainer on the MLP, initialized (parameters broadcast from rank 0). */
    static DistributedDataParallel ddp(Model model, ProcessGroup group, int batch) {
        return ddp(model, group, Fixture::sgd, DistributedDataParallel.builder(), batch);
    }

    static DistributedDataParallel ddp(
            Model model,
            ProcessGroup group,
            Supplier<Optimizer> optimizer,
            DistributedDataParallel.Builder builder,
            int batch) {
        DistributedDataParallel t =
                builder.setModel(model)
                        .setTrainingConfig(config(optimizer.get()))
                        .setProcessGroup(group)
                        .build();
        t.initialize(new Shape(batch, IN));
        return t;
    }

    /** Rank {@code rank}'s batch of step {@code step}: inputs and class labels. */
    static NDList[] batch(NDManager m, int step, int rank, int size) {
        Random random = new Random(step * 7919L + rank);
        float[] x = new float[size * IN];
        float[] y = new float[size];
        for (int i = 0; i < size; i++) {
            float s = 0;
            for (int j = 0; j < IN; j++) {
                x[i * IN + j] = (float) random.nextGaussian();
                s += x[i * IN + j] * (j % 3 - 1);
            }
            y[i] = (s > 0 ? 2 : 0) + (x[i * IN] > 0 ? 1 : 0);
        }
        return new NDList[] {
            new NDList(m.create(x, new Shape(size, IN))), new NDList(m.create(y, new Shape(size)))
        };
    }

    /** The batches of every rank at one step, concatenated: single-process training's batch. */
    static NDList[] concatenated(NDManager m, int step, int ranks, int size) {
        NDList xs = new NDList();
        NDList ys = new NDList();
        for (int r = 0; r < ranks; r++) {
            NDList[] b = batch(m, step, r, size);
            xs.add(b[0].head());
            ys.add(b[1].head());
        }
        return new NDList[] {new NDList(NDArrays.concat(xs)), new NDList(NDArrays.concat(ys))};
    }

    /** Forward and backward (one rank at a time, as DJL's PyTorch engine requires). */
    static void backward(Trainer trainer, NDList[] batch) {
        synchronized (Ranks.BACKWARD) {
            try (GradientCollector gc = trainer.newGradientCollector()) {
                NDList pred = trainer.forward(batch[0]);
                NDArray loss = trainer.getLoss().evaluate(batch[1], pred);
                gc.backward(loss);
            }
        }
    }

    /** One training step on rank {@code rank}'s batch of step {@code step}. */
    static void step(Trainer trainer, NDManager manager, int step, int rank, int size) {
        try (NDManager m = manager.newSubManager()) {
            backward(trainer, batch(m, step, rank, size));
            trainer.step();
        }
    }

    static Map<String, float[]> snapshot(Block block) {
        Map<String, float[]> values = new LinkedHashMap<>();
        for (Pair<String, Parameter> p : block.getParameters()) {
            values.put(p.getKey(), p.getValue().getArray().toFloatArray());
        }
        return values;
    }

    static void load(Block block, Map<String, float[]> values, NDManager manager) {
        for (Pair<String, Parameter> p : block.getParameters()) {
            NDArray target = p.getValue().getArray();
            try (NDArray v = manager.create(values.get(p.getKey()), target.getShape())) {
                InPlace.copy(v, target, p.getKey());
            }
        }
    }

    /** Single-process training on the ranks' concatenated batches, from the given parameters. */
    static Map<String, float[]> reference(
            Map<String, float[]> initial, Optimizer optimizer, int steps, int ranks, int size) {
        try (Model model = Model.newInstance("reference");
                NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            model.setBlock(mlp());
            try (Trainer trainer = model.newTrainer(config(optimizer))) {
                trainer.initialize(new Shape(ranks * size, IN));
                load(model.getBlock(), initial, manager);
                for (int s = 0; s < steps; s++) {
                    try (NDManager m = manager.newSubManager()) {
                        backward(trainer, concatenated(m, s, ranks, size));
                        trainer.step();
                    }
                }
            }
            return snapshot(model.getBlock());
        }
    }

    /** Every value within {@code rel} of the expected one, relative to its magnitude. */
    static void assertClose(
            Map<String, float[]> expected, Map<String, float[]> actual, double rel) {
        assertEquals(expected.keySet(), actual.keySet());
        for (Map.Entry<String, float[]> e : expected.entrySet()) {
            float[] a = actual.get(e.getKey());
            float[] x = e.getValue();
            assertEquals(x.length, a.length, e.getKey());
            for (int i = 0; i < x.length; i++) {
                double tol = rel * Math.max(Math.abs(x[i]), 1e-2);
                assertTrue(
                        Math.abs(a[i] - x[i]) <= tol,
                        e.getKey() + "[" + i + "]: " + a[i] + " (expected: " + x[i] + ")");
            }
        }
    }

    static void assertSame(Map<String, float[]> expected, Map<String, float[]> actual) {
        assertEquals(expected.keySet(), actual.keySet());
        for (Map.Entry<String, float[]> e : expected.entrySet()) {
            org.junit.jupiter.api.Assertions.assertArrayEquals(
                    e.getValue(), actual.get(e.getKey()), e.getKey());
        }
    }
}
