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
package ai.djl.distributed.fsdp;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.distributed.transformer.CausalLmLoss;
import ai.djl.distributed.transformer.GptConfig;
import ai.djl.distributed.transformer.GptModel;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
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

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/** Models, data and training steps shared by the FSDP tests. */
final class Fixture {

    static final int VOCAB = 13;
    static final int TIME = 8;

    private Fixture() {}

    static <T> List<T> ranks(int size, MultiRank.Body<T> body) throws Exception {
        return MultiRank.run(size, Duration.ofSeconds(60), body);
    }

    /** 2 layers, width 16 (two heads), context 8, vocabulary 13: 7,112 parameters. */
    static GptConfig gpt(float dropout) {
        return GptConfig.builder()
                .setVocabSize(VOCAB)
                .setContextLength(TIME)
                .setLayers(2)
                .setHeads(2)
                .setWidth(16)
                .optDropout(dropout)
                .build();
    }

    /** A GPT with deterministic parameters (no random numbers drawn), initialized. */
    static Model gptModel(float dropout) {
        Model model = Model.newInstance("gpt");
        GptModel block = new GptModel(gpt(dropout));
        block.setInitializer(deterministic(), p -> true);
        model.setBlock(block);
        block.initialize(model.getNDManager(), DataType.FLOAT32, new Shape(1, TIME));
        return model;
    }

    /** An MLP as a SequentialBlock (staged for free): 6 -> 10 -> 7 -> 5. */
    static Block mlp() {
        Block b =
                new SequentialBlock()
                        .add(Linear.builder().setUnits(10).build())
                        .add(Activation::tanh)
                        .add(Linear.builder().setUnits(7).build())
                        .add(Activation::relu)
                        .add(Linear.builder().setUnits(5).build());
        b.setInitializer(deterministic(), p -> true);
        return b;
    }

    /** An initializer drawing no random numbers: the same parameters in every run. */
    static Initializer deterministic() {
        return (manager, shape, type) -> {
            float[] v = new float[(int) shape.size()];
            for (int i = 0; i < v.length; i++) {
                v[i] = (float) (0.2 * Math.sin(1.3 * i + shape.size() + shape.dimension()));
            }
            return manager.create(v, shape).toType(type, false);
        };
    }

    static Optimizer adamW() {
        return Optimizer.adamW()
                .optLearningRateTracker(Tracker.fixed(0.01f))
                .optWeightDecays(0.1f)
                .build();
    }

    static DefaultTrainingConfig config(Optimizer optimizer) {
        return config(optimizer, new CausalLmLoss());
    }

    static DefaultTrainingConfig config(Optimizer optimizer, Loss loss) {
        return new DefaultTrainingConfig(loss)
                .optOptimizer(optimizer)
                .optDevices(new Device[] {Device.cpu()});
    }

    static FullyShardedDataParallel fsdp(
            Model model, ProcessGroup group, FullyShardedDataParallel.Builder builder) {
        return builder.setModel(model)
                .setTrainingConfig(config(adamW()))
                .setProcessGroup(group)
                .build();
    }

    /** Token ids and next-token labels for (step, rank): {@code batch} sequences of 8. */
    static NDList[] tokens(NDManager m, int step, int rank, int batch) {
        Random r = new Random(1000L * step + rank);
        long[] ids = new long[batch * (TIME + 1)];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = r.nextInt(VOCAB);
        }
        NDArray all = m.create(ids, new Shape(batch, TIME + 1));
        return new NDList[] {
            new NDList(all.get(":, 0:" + TIME)), new NDList(all.get(":, 1:" + (TIME + 1)))
        };
    }

    /** The same rows for every rank, one after the other along the batch. */
    static NDList[] concatenated(NDManager m, int step, int ranks, int batch) {
        NDList data = new NDList();
        NDList labels = new NDList();
        for (int r = 0; r < ranks; r++) {
            NDList[] b = tokens(m, step, r, batch);
            data.add(b[0].head());
            labels.add(b[1].head());
        }
        return new NDList[] {
            new NDList(NDArrays.concat(data)), new NDList(NDArrays.concat(labels))
        };
    }

    /** The MLP's inputs (4 x 6) and targets (4 x 5) for (step, rank). */
    static NDList[] regression(NDManager m, int step, int rank) {
        float[] x = new float[4 * 6];
        float[] y = new float[4 * 5];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) Math.cos(0.7 * i + 3 * step + 11 * rank);
        }
        for (int i = 0; i < y.length; i++) {
            y[i] = (float) Math.sin(0.5 * i + step - rank);
        }
        return new NDList[] {
            new NDList(m.create(x, new Shape(4, 6))), new NDList(m.create(y, new Shape(4, 5)))
        };
    }

    /** Every rank's {@link #regression} batch of a step, one after the other along the batch. */
    static NDList[] concatenatedRegression(NDManager m, int step, int ranks) {
        NDList data = new NDList();
        NDList labels = new NDList();
        for (int r = 0; r < ranks; r++) {
            NDList[] b = regression(m, step, r);
            data.add(b[0].head());
            labels.add(b[1].head());
        }
        return new NDList[] {
            new NDList(NDArrays.concat(data)), new NDList(NDArrays.concat(labels))
        };
    }

    /** One forward and backward pass through a trainer (plain or FSDP). */
    static float backward(Trainer t, NDList[] batch) {
        try (GradientCollector c = t.newGradientCollector()) {
            NDList preds = t.forward(batch[0], batch[1]);
            NDArray loss = t.getLoss().evaluate(batch[1], preds);
            c.backward(loss);
            return loss.getFloat();
        }
    }

    /** Every parameter's values, by name (a copy). */
    static Map<String, float[]> snapshot(Block block) {
        Map<String, float[]> map = new LinkedHashMap<>();
        for (Pair<String, Parameter> p : block.getParameters()) {
            map.put(p.getKey(), p.getValue().getArray().toFloatArray());
        }
        return map;
    }

    /**
     * The relative error of an array, {@code ||a - b|| / ||b||} (2-norms): the measure of the
     * equivalence tests. Elementwise bounds would fail on elements whose gradient is a near-zero
     * sum of terms of both signs, where Adam's {@code m / (sqrt(v) + 1e-8)} turns a rounding of the
     * sum's order into a visible difference (PyTorch's own assert_close adds an absolute 1e-5 for
     * float32 for that reason).
     */
    static double relativeError(float[] a, float[] b) {
        double diff = 0;
        double scale = 0;
        for (int i = 0; i < a.length; i++) {
            diff += ((double) a[i] - b[i]) * ((double) a[i] - b[i]);
            scale += (double) b[i] * b[i];
        }
        return scale == 0 ? Math.sqrt(diff) : Math.sqrt(diff / scale);
    }
}
