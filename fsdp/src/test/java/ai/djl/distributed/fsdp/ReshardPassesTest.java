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
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.LambdaBlock;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * FsdpPassesTest's ways of driving passes, at 2 ranks under FULL_SHARD without recompute, where
 * units really are freed in place after their forward pass (at 1 rank nothing is ever freed).
 */
@Timeout(120)
class ReshardPassesTest {

    private static DefaultTrainingConfig config() {
        Optimizer sgd = Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).build();
        return new DefaultTrainingConfig(Loss.l2Loss())
                .optOptimizer(sgd)
                .optDevices(new Device[] {Device.cpu()});
    }

    private static NDList[] batch(NDManager m, int seed) {
        float[] x = new float[2 * 6];
        float[] y = new float[2 * 5];
        for (int i = 0; i < x.length; i++) {
            x[i] = (float) Math.sin(seed * 7 + i);
        }
        for (int i = 0; i < y.length; i++) {
            y[i] = (float) Math.cos(seed * 3 + i);
        }
        return new NDList[] {
            new NDList(m.create(x, new Shape(2, 6))), new NDList(m.create(y, new Shape(2, 5)))
        };
    }

    private static Block model(AtomicBoolean fail) {
        Block b =
                new SequentialBlock()
                        .add(Linear.builder().setUnits(10).build())
                        .add(new LambdaBlock(x -> new NDList(x.head().tanh())))
                        .add(Linear.builder().setUnits(7).build())
                        .add(
                                new LambdaBlock(
                                        x -> {
                                            if (fail.get()) {
                                                throw new IllegalStateException("injected");
                                            }
                                            return new NDList(x.head().tanh());
                                        }))
                        .add(Linear.builder().setUnits(7).build())
                        .add(Linear.builder().setUnits(5).build());
        b.setInitializer(Fixture.deterministic(), p -> true);
        return b;
    }

    private static Map<String, float[]> plain(int... seeds) {
        try (Model model = Model.newInstance("plain");
                NDManager m = NDManager.newBaseManager()) {
            model.setBlock(model(new AtomicBoolean()));
            try (Trainer t = model.newTrainer(config())) {
                t.initialize(new Shape(2, 6));
                for (int seed : seeds) {
                    Fixture.backward(t, batch(m, seed));
                    t.step();
                }
            }
            return Fixture.snapshot(model.getBlock());
        }
    }

    enum Way {
        ABANDONED_COLLECTOR,
        FORWARDS_OUTSIDE_A_COLLECTOR,
        FAILED_FORWARD,
        FULL_PARAMETERS_MID_PASS,
        EVALUATE_AND_FULL_PARAMETERS_BETWEEN_STEPS,
    }

    /**
     * The units freed in place by a training forward pass: the model's stages are its six children,
     * a unit per Linear (the tanh stages hold no parameters); each unit is freed after its stage,
     * except the last stage's, whose backward comes first. No Linear's output views its parameters,
     * so three of the four.
     */
    private static final int EVICTED = 3;

    private static int evicted(FullyShardedDataParallel t) {
        int n = 0;
        for (FlatUnit u : t.units()) {
            n += u.isEvicted() ? 1 : 0;
        }
        return n;
    }

    /** What one rank does with its trainer, its manager and its own failure switch. */
    private interface Body {
        void run(FullyShardedDataParallel t, NDManager m, AtomicBoolean fail);
    }

    @ParameterizedTest
    @EnumSource(Way.class)
    void passesDrivenAnyWayWithUnitsFreedInPlaceEndAsAPlainTrainers(Way way) throws Exception {
        Map<String, float[]> expected = plain(1, 2);
        Body body =
                (t, m, fail) -> {
                    NDList[] a = batch(m, 1);
                    NDList[] b = batch(m, 2);
                    switch (way) {
                        case ABANDONED_COLLECTOR:
                            GradientCollector abandoned = t.newGradientCollector();
                            try {
                                t.forward(b[0], b[1]);
                                assertEquals(
                                        EVICTED,
                                        evicted(t),
                                        "units freed in place after a forward pass");
                            } finally {
                                abandoned.close();
                            }
                            Fixture.backward(t, a);
                            t.step();
                            break;
                        case FORWARDS_OUTSIDE_A_COLLECTOR:
                            t.forward(b[0], b[1]);
                            assertEquals(
                                    EVICTED,
                                    evicted(t),
                                    "units freed in place after a forward pass");
                            t.forward(a[0], a[1]);
                            t.evaluate(b[0]);
                            Fixture.backward(t, a);
                            t.step();
                            break;
                        case FAILED_FORWARD:
                            fail.set(true);
                            GradientCollector failed = t.newGradientCollector();
                            try {
                                IllegalStateException e =
                                        assertThrows(
                                                IllegalStateException.class,
                                                () -> t.forward(b[0], b[1]));
                                assertEquals("injected", e.getMessage());
                            } finally {
                                failed.close();
                            }
                            fail.set(false);
                            Fixture.backward(t, a);
                            t.step();
                            break;
                        case FULL_PARAMETERS_MID_PASS:
                            try (GradientCollector c = t.newGradientCollector()) {
                                NDList p = t.forward(b[0], b[1]);
                                assertEquals(
                                        EVICTED,
                                        evicted(t),
                                        "units freed in place after a forward pass");
                                t.forEachFullParameter((n, v) -> v.toFloatArray());
                                NDArray loss = t.getLoss().evaluate(b[1], p);
                                assertThrows(IllegalStateException.class, () -> c.backward(loss));
                                c.zeroGradients(); // a refused backward counts as a failed one
                            }
                            Fixture.backward(t, a);
                            t.step();
                            break;
                        default:
                            Fixture.backward(t, a);
                            t.step();
                            t.evaluate(b[0]);
                            t.forEachFullParameter((n, v) -> v.toFloatArray());
                            Fixture.backward(t, b);
                            t.step();
                            t.evaluate(a[0]);
                            return;
                    }
                    Fixture.backward(t, b);
                    t.step();
                };
        List<Map<String, float[]>> actual =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            // each rank's own: a switch shared by the ranks' threads could be
                            // turned off by one rank before the other's forward reached it
                            AtomicBoolean fail = new AtomicBoolean();
                            try (Model model = Model.newInstance("fsdp")) {
                                model.setBlock(model(fail));
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .optStrategy(ShardingStrategy.FULL_SHARD)
                                                .setModel(model)
                                                .setTrainingConfig(config())
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(2, 6));
                                    body.run(t, manager, fail);
                                    Map<String, float[]> all = new LinkedHashMap<>();
                                    t.forEachFullParameter((n, v) -> all.put(n, v.toFloatArray()));
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
