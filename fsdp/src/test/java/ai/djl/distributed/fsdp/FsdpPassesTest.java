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
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.LambdaBlock;
import ai.djl.nn.Parameter;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.BatchNorm;
import ai.djl.training.DefaultTrainingConfig;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * How FSDP's training passes meet the ways a loop can drive them: two forward passes before one
 * backward, a collector closed without its backward, BatchNorm's running statistics under
 * recompute, and a backward pass that fails part way. Every expectation comes from a plain DJL
 * trainer on one process, driven the same way.
 */
@Timeout(120)
class FsdpPassesTest {

    private static DefaultTrainingConfig config() {
        Optimizer sgd = Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).build();
        return new DefaultTrainingConfig(Loss.l2Loss())
                .optOptimizer(sgd)
                .optDevices(new Device[] {Device.cpu()});
    }

    /** Inputs (2 x 6) and labels (2 x 5) drawn from {@code seed}, no random generator. */
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

    private static Block batchNormModel() {
        Block b =
                new SequentialBlock()
                        .add(Linear.builder().setUnits(8).build())
                        .add(BatchNorm.builder().build())
                        .add(Linear.builder().setUnits(5).build());
        b.setInitializer(Fixture.deterministic(), p -> true);
        return b;
    }

    /** A model using one Linear block twice (its weight shared by the two uses). */
    private static Block sharedBlockModel() {
        Block shared = Linear.builder().setUnits(6).build();
        Block b =
                new SequentialBlock()
                        .add(shared)
                        .add(new LambdaBlock(x -> new NDList(x.head().tanh())))
                        .add(shared)
                        .add(Linear.builder().setUnits(5).build());
        b.setInitializer(Fixture.deterministic(), p -> true);
        return b;
    }

    /** A 4-stage MLP whose second stage throws while {@code fail} is set. */
    private static Block failingModel(AtomicBoolean fail) {
        Block b =
                new SequentialBlock()
                        .add(Linear.builder().setUnits(10).build())
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

    /** Every parameter after plain training steps, one on each seed's batch. */
    private static Map<String, float[]> plain(Supplier<Block> block, int... seeds) {
        try (Model model = Model.newInstance("plain");
                NDManager m = NDManager.newBaseManager()) {
            model.setBlock(block.get());
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

    /** Every parameter (buffers included) after {@code body} drove a one-rank FSDP trainer. */
    private static Map<String, float[]> fsdp(
            Block block, ShardingStrategy strategy, Consumer<FsdpRun> body) throws Exception {
        return Fixture.ranks(
                        1,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("fsdp")) {
                                model.setBlock(block);
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .optStrategy(strategy)
                                                // FULL_SHARD as these passes were written for:
                                                // with its recompute
                                                .optActivationCheckpointing(
                                                        strategy == ShardingStrategy.FULL_SHARD)
                                                .setModel(model)
                                                .setTrainingConfig(config())
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(2, 6));
                                    body.accept(new FsdpRun(t, manager));
                                    Map<String, float[]> all = new LinkedHashMap<>();
                                    t.forEachFullParameter((n, a) -> all.put(n, a.toFloatArray()));
                                    // buffers (running statistics) stay whole in the block
                                    for (Pair<String, Parameter> p :
                                            model.getBlock().getParameters()) {
                                        all.computeIfAbsent(
                                                p.getKey(),
                                                n -> p.getValue().getArray().toFloatArray());
                                    }
                                    return all;
                                }
                            }
                        })
                .get(0);
    }

    private static void assertSameParameters(
            Map<String, float[]> expected, Map<String, float[]> actual) {
        assertEquals(expected.keySet(), actual.keySet());
        for (String name : expected.keySet()) {
            assertArrayEquals(expected.get(name), actual.get(name), name);
        }
    }

    /** A second pass, a training one or an evaluation, run while the first awaits its backward. */
    private enum SecondPass {
        FORWARD,
        EVALUATE;

        NDList run(FullyShardedDataParallel trainer, NDList[] batch) {
            return this == FORWARD
                    ? trainer.forward(batch[0], batch[1])
                    : trainer.evaluate(batch[0]);
        }
    }

    @ParameterizedTest
    @EnumSource(SecondPass.class)
    void aSecondPassBeforeTheBackwardIsRefusedAndTheFirstStillCounts(SecondPass second)
            throws Exception {
        Map<String, float[]> expected = plain(Fixture::mlp, 1);
        Map<String, float[]> actual =
                fsdp(
                        Fixture.mlp(),
                        ShardingStrategy.FULL_SHARD,
                        run -> {
                            NDList[] a = batch(run.manager, 1);
                            NDList[] b = batch(run.manager, 2);
                            try (GradientCollector c = run.trainer.newGradientCollector()) {
                                NDList pa = run.trainer.forward(a[0], a[1]);
                                IllegalStateException e =
                                        assertThrows(
                                                IllegalStateException.class,
                                                () -> second.run(run.trainer, b));
                                String call = second.name().toLowerCase(Locale.ROOT) + ": ";
                                assertTrue(
                                        e.getMessage().startsWith(call)
                                                && e.getMessage()
                                                        .contains("not been backpropagated"),
                                        e.getMessage());
                                c.backward(run.trainer.getLoss().evaluate(a[1], pa));
                                // after its backward, an evaluation is a plain one
                                assertEquals(
                                        new Shape(2, 5),
                                        run.trainer.evaluate(b[0]).head().getShape());
                            }
                            run.trainer.step();
                        });
        assertSameParameters(expected, actual);
    }

    @ParameterizedTest
    @EnumSource(
            value = ShardingStrategy.class,
            names = {"FULL_SHARD", "NO_SHARD"})
    void aBlockUsedTwiceIsUpdatedOncePerStepAsByAPlainTrainer(ShardingStrategy strategy)
            throws Exception {
        Map<String, float[]> expected = plain(FsdpPassesTest::sharedBlockModel, 1, 2);
        Map<String, float[]> actual =
                fsdp(
                        sharedBlockModel(),
                        strategy,
                        run -> {
                            run.step(1);
                            run.step(2);
                        });
        assertSameParameters(expected, actual);
    }

    @Test
    void forwardPassesOutsideACollectorDropEachOtherOnAnyThread() throws Exception {
        // PyTorch's grad mode is on by default on a thread DJL never touched: only an open
        // collector makes a pass one that must be backpropagated.
        Map<String, float[]> expected = plain(Fixture::mlp, 2);
        Map<String, float[]> actual =
                fsdp(
                        Fixture.mlp(),
                        ShardingStrategy.FULL_SHARD,
                        run -> {
                            NDList[] a = batch(run.manager, 1);
                            Throwable[] failure = new Throwable[1];
                            Thread other =
                                    new Thread(
                                            () -> {
                                                try {
                                                    run.trainer.forward(a[0], a[1]);
                                                    run.trainer.forward(a[0], a[1]);
                                                } catch (RuntimeException | Error e) {
                                                    failure[0] = e;
                                                }
                                            });
                            other.start();
                            try {
                                other.join(60_000);
                            } catch (InterruptedException e) {
                                throw new IllegalStateException(e);
                            }
                            assertEquals(null, failure[0]);
                            run.step(2);
                        });
        assertSameParameters(expected, actual);
    }

    @Test
    void aCollectorClosedWithoutItsBackwardDropsThatPass() throws Exception {
        Map<String, float[]> expected = plain(Fixture::mlp, 2);
        Map<String, float[]> actual =
                fsdp(
                        Fixture.mlp(),
                        ShardingStrategy.FULL_SHARD,
                        run -> {
                            NDList[] a = batch(run.manager, 1);
                            GradientCollector c = run.trainer.newGradientCollector();
                            try {
                                run.trainer.forward(a[0], a[1]); // say the loss then failed
                            } finally {
                                c.close(); // no backward
                            }
                            run.step(2);
                        });
        assertSameParameters(expected, actual);
    }

    @ParameterizedTest
    @EnumSource(
            value = ShardingStrategy.class,
            names = {"FULL_SHARD", "SHARD_GRAD_OP"})
    void batchNormRunningStatisticsEndAsAPlainTrainers(ShardingStrategy strategy) throws Exception {
        Map<String, float[]> expected = plain(FsdpPassesTest::batchNormModel, 1, 2);
        Map<String, float[]> actual =
                fsdp(
                        batchNormModel(),
                        strategy,
                        run -> {
                            for (int seed = 1; seed <= 2; seed++) {
                                run.step(seed);
                            }
                        });
        assertTrue(expected.keySet().stream().anyMatch(n -> n.contains("running")));
        assertSameParameters(expected, actual);
    }

    @Test
    void aBackwardThatFailsPartWayLeavesNoneOfItsGradients() throws Exception {
        AtomicBoolean fail = new AtomicBoolean();
        Map<String, float[]> expected = plain(() -> failingModel(new AtomicBoolean()), 2);
        Map<String, float[]> actual =
                fsdp(
                        failingModel(fail),
                        ShardingStrategy.FULL_SHARD,
                        run -> {
                            NDList[] a = batch(run.manager, 1);
                            try (GradientCollector c = run.trainer.newGradientCollector()) {
                                NDList p = run.trainer.forward(a[0], a[1]);
                                NDArray loss = run.trainer.getLoss().evaluate(a[1], p);
                                // The recompute in the backward pass runs the stage again, after
                                // the last two stages' reductions started.
                                fail.set(true);
                                IllegalStateException e =
                                        assertThrows(
                                                IllegalStateException.class,
                                                () -> c.backward(loss));
                                assertEquals("injected", e.getMessage());
                                fail.set(false);
                                IllegalStateException refused =
                                        assertThrows(
                                                IllegalStateException.class, run.trainer::step);
                                assertTrue(
                                        refused.getMessage().contains("zeroGradients"),
                                        refused.getMessage());
                                c.zeroGradients();
                            }
                            run.step(2);
                        });
        assertSameParameters(expected, actual);
    }

    /** The trainer and the rank's manager, handed to a test's body. */
    private static final class FsdpRun {

        final FullyShardedDataParallel trainer;
        final NDManager manager;

        FsdpRun(FullyShardedDataParallel trainer, NDManager manager) {
            this.trainer = trainer;
            this.manager = manager;
        }

        /** A whole training step on {@code seed}'s batch, as {@link #plain} takes it. */
        void step(int seed) {
            Fixture.backward(trainer, batch(manager, seed));
            trainer.step();
        }
    }
}
