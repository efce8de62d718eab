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
package ai.djl.distributed.transformer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.ParameterStore;
import ai.djl.training.Trainer;
import ai.djl.training.initializer.NormalInitializer;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Test;

import java.util.Random;

class GptTrainingTest {

    @Test
    void tinyModelOverfitsOneBatch() {
        GptConfig config = GptConfig.preset("tiny").setVocabSize(64).build();
        Engine.getInstance().setRandomSeed(3);
        try (Model model = Model.newInstance("overfit")) {
            model.setBlock(new GptModel(config));
            DefaultTrainingConfig tc =
                    new DefaultTrainingConfig(new CausalLmLoss())
                            .optOptimizer(
                                    Optimizer.adamW()
                                            .optLearningRateTracker(Tracker.fixed(1e-2f))
                                            .optWeightDecays(0)
                                            .build());
            try (Trainer trainer = model.newTrainer(tc);
                    NDManager m = NDManager.newBaseManager()) {
                trainer.initialize(new Shape(4, 16));
                // 4 random sequences of 17 tokens: x is the first 16, y the last 16
                NDArray seq = TestModels.randomTokens(m, 4, 17, 64, 11);
                NDList x = new NDList(seq.get(":, :16"));
                NDList y = new NDList(seq.get(":, 1:"));
                float first = 0;
                float last = 0;
                for (int step = 0; step < 200; step++) {
                    try (GradientCollector gc = trainer.newGradientCollector()) {
                        NDArray loss = trainer.getLoss().evaluate(y, trainer.forward(x));
                        gc.backward(loss);
                        last = loss.getFloat();
                        if (step == 0) {
                            first = last;
                        }
                    }
                    trainer.step();
                }
                // a fresh model predicts about uniformly: ln(64) nats
                assertEquals(Math.log(64), first, 0.1);
                assertTrue(last < 0.05, "loss after 200 steps: " + last);
            }
        }
    }

    @Test
    void gradientsMatchCentralFiniteDifferencesInFloat64() {
        GptConfig config =
                GptConfig.builder()
                        .setVocabSize(7)
                        .setContextLength(5)
                        .setLayers(2)
                        .setHeads(2)
                        .setWidth(8)
                        .build();
        Engine.getInstance().setRandomSeed(5);
        try (Model model = Model.newInstance("gradcheck");
                NDManager m = NDManager.newBaseManager()) {
            GptModel block = new GptModel(config);
            // large random values everywhere (LayerNorm scales and shifts, biases included), so
            // that attention, GELU and LayerNorm work far from their linear regime
            block.setInitializer(new NormalInitializer(0.5f), p -> true);
            model.setBlock(block);
            block.initialize(model.getNDManager(), DataType.FLOAT64, new Shape(2, 5));
            NDArray seq = TestModels.randomTokens(m, 2, 6, 7, 17);
            NDList x = new NDList(seq.get(":, :5"));
            NDList y = new NDList(seq.get(":, 1:"));
            CausalLmLoss loss = new CausalLmLoss();
            ParameterStore ps = new ParameterStore(m, false);

            try (GradientCollector gc = Engine.getInstance().newGradientCollector()) {
                NDArray l = loss.evaluate(y, block.forward(ps, x, true));
                assertEquals(DataType.FLOAT64, l.getDataType());
                gc.backward(l);
            }
            Random pick = new Random(23);
            double eps = 1e-6;
            int checked = 0;
            for (Pair<String, Parameter> p : block.getParameters()) {
                NDArray w = p.getValue().getArray();
                double[] grad = w.getGradient().toDoubleArray();
                long[] dims = w.getShape().getShape();
                for (int k = 0; k < 3; k++) {
                    int flat = pick.nextInt(grad.length);
                    long[] coords = coordinates(dims, flat);
                    NDIndex at = new NDIndex(coords);
                    double v = w.getDouble(coords);
                    w.set(at, v + eps);
                    double plus = loss.evaluate(y, block.forward(ps, x, false)).getDouble();
                    w.set(at, v - eps);
                    double minus = loss.evaluate(y, block.forward(ps, x, false)).getDouble();
                    w.set(at, v);
                    double numeric = (plus - minus) / (2 * eps);
                    // central differences in float64: truncation ~eps^2, rounding ~1e-16/eps
                    double tolerance = 1e-8 + 1e-6 * Math.abs(numeric);
                    assertEquals(numeric, grad[flat], tolerance, p.getKey() + "[" + flat + "]");
                    checked++;
                }
            }
            assertEquals(3 * block.getParameters().size(), checked);
        }
    }

    private static long[] coordinates(long[] dims, int flat) {
        long[] coords = new long[dims.length];
        long rest = flat;
        for (int d = dims.length - 1; d >= 0; d--) {
            coords[d] = rest % dims[d];
            rest /= dims[d];
        }
        return coords;
    }
}
