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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.AbstractBlock;
import ai.djl.nn.Block;
import ai.djl.nn.LambdaBlock;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.ParameterStore;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.PairList;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Stages whose outputs are views of their own parameters (a learned prefix handed on to a later
 * stage, say): the next stage reads them. FULL_SHARD must not free that unit's memory in place
 * after the stage's forward pass (the next stage would read a storage of 0 bytes through a null
 * data pointer), and with recompute it must not hand that buffer back to the pool, where the next
 * unit of the same size is gathered into it while the next stage reads it (both prefixes here are
 * six floats).
 */
@Timeout(120)
class ReshardAliasingTest {

    /** Hands on its input and its parameter, as a view (no copy). */
    static final class Prefix extends AbstractBlock {

        private final Parameter prefix;

        Prefix() {
            prefix =
                    addParameter(
                            Parameter.builder()
                                    .setName("prefix")
                                    .setType(Parameter.Type.WEIGHT)
                                    .optShape(new Shape(6))
                                    .build());
        }

        @Override
        protected NDList forwardInternal(
                ParameterStore ps,
                NDList inputs,
                boolean training,
                PairList<String, Object> params) {
            NDArray p = ps.getValue(prefix, inputs.head().getDevice(), training);
            return new NDList(inputs.head(), p.reshape(1, 6));
        }

        @Override
        public Shape[] getOutputShapes(Shape[] inputShapes) {
            return new Shape[] {inputShapes[0], new Shape(1, 6)};
        }
    }

    private static Block model() {
        Block b =
                new SequentialBlock()
                        .add(Linear.builder().setUnits(6).build())
                        .add(new Prefix())
                        .add(new LambdaBlock(x -> new NDList(x.get(0).add(x.get(1)).tanh())))
                        .add(new Prefix())
                        .add(new LambdaBlock(x -> new NDList(x.get(0).mul(x.get(1)).tanh())))
                        .add(Linear.builder().setUnits(5).build());
        b.setInitializer(Fixture.deterministic(), p -> true);
        return b;
    }

    static DefaultTrainingConfig config() {
        Optimizer sgd = Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).build();
        return new DefaultTrainingConfig(Loss.l2Loss())
                .optOptimizer(sgd)
                .optDevices(new Device[] {Device.cpu()});
    }

    static NDList[] batch(NDManager m) {
        float[] x = new float[2 * 6];
        float[] y = new float[2 * 5];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) Math.sin(7 + i);
        }
        for (int i = 0; i < y.length; i++) {
            y[i] = (float) Math.cos(3 + i);
        }
        return new NDList[] {
            new NDList(m.create(x, new Shape(2, 6))), new NDList(m.create(y, new Shape(2, 5)))
        };
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aStageHandingOnAViewOfItsParametersKeepsThemForTheNextStage(boolean recompute)
            throws Exception {
        Map<String, float[]> expected;
        try (Model model = Model.newInstance("plain");
                NDManager m = NDManager.newBaseManager()) {
            model.setBlock(model());
            try (Trainer t = model.newTrainer(config())) {
                t.initialize(new Shape(2, 6));
                for (int s = 0; s < 3; s++) {
                    Fixture.backward(t, batch(m));
                    t.step();
                }
            }
            expected = Fixture.snapshot(model.getBlock());
        }
        // Both ranks train on the same batch: the averaged gradient is the plain trainer's.
        List<Map<String, float[]>> actual =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("fsdp")) {
                                model.setBlock(model());
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .optStrategy(ShardingStrategy.FULL_SHARD)
                                                .optActivationCheckpointing(recompute)
                                                .setModel(model)
                                                .setTrainingConfig(config())
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(2, 6));
                                    for (int s = 0; s < 3; s++) {
                                        Fixture.backward(t, batch(manager));
                                        t.step();
                                    }
                                    Map<String, float[]> all = new LinkedHashMap<>();
                                    t.forEachFullParameter((n, a) -> all.put(n, a.toFloatArray()));
                                    return all;
                                }
                            }
                        });
        for (Map<String, float[]> params : actual) {
            assertEquals(expected.keySet(), params.keySet());
            for (String name : expected.keySet()) {
                assertArrayEquals(expected.get(name), params.get(name), 1e-6f, name);
            }
        }
    }
}
