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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.staged.Stage;
import ai.djl.engine.EngineException;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.LambdaBlock;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.GradientCollector;
import ai.djl.training.ParameterStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * DDP with the staged backward pass ({@code optStagedBackward}): its reductions start during the
 * backward pass, and the parameters after K steps are bit for bit those of DDP without it, with
 * small buckets (several per step) and with gradient accumulation under {@code noSync()}; a second
 * backward pass outside {@code noSync()} is refused, and so is a step after a backward pass that
 * failed part way, until the gradients are zeroed. A parameter frozen or unfrozen after
 * synchronization, or a launched reduction that fails, fails the pass or step without updating
 * anything or blocking what follows; and the pass holds one stage boundary's gradients at a time.
 */
@Timeout(120)
class StagedBackwardDdpTest {

    private static final int STEPS = 4;
    private static final int BATCH = 4;

    private record Run(Map<String, float[]> params, boolean pendingAfterBackward) {}

    private static List<Run> train(boolean staged, int micro) throws Exception {
        return Ranks.run(
                2,
                (group, manager) -> {
                    try (Model model = Model.newInstance("ddp")) {
                        try (DistributedDataParallel t =
                                smallBuckets(model, Fixture.mlp(), group, staged)) {
                            boolean pending = false;
                            for (int s = 0; s < STEPS; s++) {
                                try (NDManager m = manager.newSubManager()) {
                                    for (int k = 0; k < micro - 1; k++) {
                                        NoSync scope = t.noSync();
                                        try {
                                            Fixture.backward(
                                                    t,
                                                    Fixture.batch(
                                                            m,
                                                            s * micro + k,
                                                            group.getRank(),
                                                            BATCH));
                                        } finally {
                                            scope.close();
                                        }
                                    }
                                    Fixture.backward(
                                            t,
                                            Fixture.batch(
                                                    m,
                                                    s * micro + micro - 1,
                                                    group.getRank(),
                                                    BATCH));
                                    pending |= t.hasPendingUpdates();
                                    t.step();
                                }
                            }
                            return new Run(Fixture.snapshot(model.getBlock()), pending);
                        }
                    }
                });
    }

    @Test
    void reductionsStartInTheBackwardPassAndGiveTheSameParameters() throws Exception {
        for (int micro : new int[] {1, 2}) {
            List<Run> plain = train(false, micro);
            List<Run> staged = train(true, micro);
            assertTrue(staged.get(0).pendingAfterBackward(), "buckets launched in backward");
            assertTrue(!plain.get(0).pendingAfterBackward());
            for (int r = 0; r < 2; r++) {
                Fixture.assertSame(plain.get(r).params(), staged.get(r).params());
            }
        }
    }

    @Test
    void aSecondBackwardPassOutsideNoSyncIsRefused() throws Exception {
        List<String> messages =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                model.setBlock(Fixture.mlp());
                                try (DistributedDataParallel t =
                                        Fixture.ddp(
                                                model,
                                                group,
                                                Fixture::adamW,
                                                DistributedDataParallel.builder()
                                                        .optStagedBackward(true),
                                                BATCH)) {
                                    Fixture.backward(
                                            t, Fixture.batch(manager, 0, group.getRank(), BATCH));
                                    IllegalStateException e =
                                            assertThrows(
                                                    IllegalStateException.class,
                                                    () ->
                                                            Fixture.backward(
                                                                    t,
                                                                    Fixture.batch(
                                                                            manager,
                                                                            1,
                                                                            group.getRank(),
                                                                            BATCH)));
                                    t.step();
                                    return e.getMessage();
                                }
                            }
                        });
        assertTrue(messages.get(0).contains("inside noSync()"), messages.get(0));
        assertEquals(2, messages.size());
    }

    @Test
    void stagedBackwardDoesNotCombineWithOverlapWithForward() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                Ranks.run(
                                        1,
                                        (group, manager) -> {
                                            try (Model model = Model.newInstance("ddp")) {
                                                model.setBlock(Fixture.mlp());
                                                return Fixture.ddp(
                                                        model,
                                                        group,
                                                        Fixture::adamW,
                                                        DistributedDataParallel.builder()
                                                                .optStagedBackward(true)
                                                                .optOverlapWithForward(true),
                                                        BATCH);
                                            }
                                        }));
        assertTrue(e.getMessage().startsWith("stagedBackward with overlapWithForward true"));
    }

    /**
     * A staged backward pass that fails part way, on every rank, after its first bucket was sent:
     * the next forward pass and step are refused naming the failure, and once the gradients are
     * zeroed the retried step gives the parameters of a run that never failed (DDP without the
     * staged backward), bit for bit: nothing of the failed pass was applied, and the ranks stayed
     * in step.
     */
    @Test
    void aBackwardPassThatFailsPartWayIsRefusedUntilTheGradientsAreZeroed() throws Exception {
        int failing = 1;
        List<Map<String, float[]>> reference = trainFaultyMlp(false, -1);
        List<Map<String, float[]>> recovered = trainFaultyMlp(true, failing);
        for (int r = 0; r < 2; r++) {
            Fixture.assertSame(reference.get(r), recovered.get(r));
        }
    }

    /**
     * Trains {@link #faultyMlp} for 3 steps; with {@code staged}, the backward pass of step {@code
     * failing} first fails, and the step is retried once the gradients are zeroed.
     */
    private static List<Map<String, float[]>> trainFaultyMlp(boolean staged, int failing)
            throws Exception {
        return Ranks.run(
                2,
                (group, manager) -> {
                    AtomicBoolean fail = new AtomicBoolean();
                    try (Model model = Model.newInstance("ddp")) {
                        try (DistributedDataParallel t =
                                smallBuckets(model, faultyMlp(fail), group, staged)) {
                            for (int s = 0; s < 3; s++) {
                                try (NDManager m = manager.newSubManager()) {
                                    NDList[] batch = Fixture.batch(m, s, group.getRank(), BATCH);
                                    if (s == failing) {
                                        failPartWay(t, batch, fail);
                                    }
                                    if (staged) {
                                        backwardUnlocked(t, batch);
                                    } else {
                                        Fixture.backward(t, batch);
                                    }
                                    t.step();
                                }
                            }
                            return Fixture.snapshot(model.getBlock());
                        }
                    }
                });
    }

    /**
     * DDP with AdamW on {@code block}, its parameters the same in every run, in buckets small
     * enough that the MLP's parameters spread over several; the staged pass on or off.
     */
    private static DistributedDataParallel smallBuckets(
            Model model, Block block, ProcessGroup group, boolean staged) {
        block.setInitializer(Fixture.deterministic(), p -> true);
        model.setBlock(block);
        return Fixture.ddp(
                model,
                group,
                Fixture::adamW,
                DistributedDataParallel.builder()
                        .optFirstBucketBytes(256)
                        .optBucketCapBytes(1024)
                        .optStagedBackward(staged),
                BATCH);
    }

    /** One failed backward pass, the refusals that follow it, and the zeroing that ends them. */
    private static void failPartWay(DistributedDataParallel t, NDList[] batch, AtomicBoolean fail) {
        fail.set(true);
        EngineException failure =
                assertThrows(EngineException.class, () -> backwardUnlocked(t, batch));
        assertTrue(failure.getMessage().contains("inplace operation"), failure.getMessage());
        fail.set(false);
        IllegalStateException forward =
                assertThrows(IllegalStateException.class, () -> backwardUnlocked(t, batch));
        assertEquals(
                "forward: the last backward pass failed part way, and the gradients hold part of"
                        + " it (expected: zeroGradients() on a gradient collector of this trainer"
                        + " before the next training pass)",
                forward.getMessage());
        IllegalStateException step = assertThrows(IllegalStateException.class, t::step);
        assertEquals(
                "step: the last backward pass failed part way, and the gradients hold part of it"
                        + " (expected: zeroGradients() on a gradient collector of this trainer"
                        + " before the next step)",
                step.getMessage());
        try (GradientCollector gc = t.newGradientCollector()) {
            gc.zeroGradients();
        }
    }

    /**
     * Forward and backward without {@link Ranks#BACKWARD}: a staged trainer's collector is DDP's
     * own, not DJL's one-per-JVM collector, and a failing pass waits for the buckets it sent, which
     * the other rank sends from its own backward pass.
     */
    private static void backwardUnlocked(DistributedDataParallel t, NDList[] batch) {
        try (GradientCollector gc = t.newGradientCollector()) {
            NDList pred = t.forward(batch[0]);
            gc.backward(t.getLoss().evaluate(batch[1], pred));
        }
    }

    /**
     * The test MLP with a stage before its second layer that passes its input on, or, while {@code
     * fail} is set, computes {@code exp} and then writes over the result that exp's backward needs:
     * the backward pass then fails in that stage, once the later layers' gradients are final and
     * the first bucket (the last two layers' parameters, as PyTorch's initial buckets put them) is
     * on the wire.
     */
    private static Block faultyMlp(AtomicBoolean fail) {
        return new SequentialBlock()
                .add(Linear.builder().setUnits(32).build())
                .add(Activation::relu)
                .add(
                        x -> {
                            if (!fail.get()) {
                                return x;
                            }
                            NDArray y = x.head().exp();
                            y.addi(0f);
                            return new NDList(y);
                        })
                .add(Linear.builder().setUnits(16).build())
                .add(Activation::relu)
                .add(Linear.builder().setUnits(Fixture.CLASSES).build());
    }

    /**
     * A step whose reduction, launched by the staged backward pass, fails (a comm hook's failure,
     * on every rank): the step throws it, and the trainer trains on, the next training pass not
     * taken for a second one before a step. Once the gradients are zeroed, the following steps give
     * the parameters of a run without the failed step, bit for bit: it updated nothing.
     */
    @Test
    void aStepWhoseLaunchedReductionFailedLeavesTheTrainerTraining() throws Exception {
        List<Map<String, float[]>> reference = trainThroughAFailedReduction(false);
        List<Map<String, float[]>> recovered = trainThroughAFailedReduction(true);
        for (int r = 0; r < 2; r++) {
            Fixture.assertSame(reference.get(r), recovered.get(r));
        }
    }

    /** Steps on batches 0, 2 and 3; with {@code failing}, a step on batch 1 whose hook fails. */
    private static List<Map<String, float[]>> trainThroughAFailedReduction(boolean failing)
            throws Exception {
        return Ranks.run(
                2,
                (group, manager) -> {
                    int rank = group.getRank();
                    AtomicBoolean fail = new AtomicBoolean();
                    CommHook allReduce = CommHooks.allReduce();
                    CommHook hook =
                            (g, bucket) ->
                                    fail.get()
                                            ? CompletableFuture.failedFuture(
                                                    new IllegalStateException("injected"))
                                            : allReduce.reduce(g, bucket);
                    try (Model model = Model.newInstance("ddp")) {
                        Block block = Fixture.mlp();
                        block.setInitializer(Fixture.deterministic(), p -> true);
                        model.setBlock(block);
                        try (DistributedDataParallel t =
                                Fixture.ddp(
                                        model,
                                        group,
                                        Fixture::adamW,
                                        DistributedDataParallel.builder()
                                                .optFirstBucketBytes(256)
                                                .optBucketCapBytes(1024)
                                                .optCommHook(hook)
                                                .optStagedBackward(true),
                                        BATCH)) {
                            Fixture.step(t, manager, 0, rank, BATCH);
                            if (failing) {
                                fail.set(true);
                                IllegalStateException e =
                                        assertThrows(
                                                IllegalStateException.class,
                                                () -> Fixture.step(t, manager, 1, rank, BATCH));
                                assertEquals("injected", e.getMessage());
                                fail.set(false);
                                try (GradientCollector gc = t.newGradientCollector()) {
                                    gc.zeroGradients();
                                }
                            }
                            Fixture.step(t, manager, 2, rank, BATCH);
                            Fixture.step(t, manager, 3, rank, BATCH);
                            return Fixture.snapshot(block);
                        }
                    }
                });
    }

    @Test
    void freezingAfterSynchronizationIsRefusedBeforeAnyUpdate() throws Exception {
        assertRefusedBeforeAnyUpdate(
                true,
                "parameter 05Linear_weight was frozen after DDP laid out its buckets (expected:"
                        + " freeze parameters before trainer.initialize or the first step)");
    }

    @Test
    void unfreezingAfterSynchronizationIsRefusedBeforeAnyUpdate() throws Exception {
        assertRefusedBeforeAnyUpdate(
                false,
                "parameter 01Linear_weight was unfrozen after DDP laid out its buckets (expected:"
                        + " unfreeze parameters before trainer.initialize or the first step)");
    }

    /**
     * Freezing the last layer (or unfreezing the first, frozen from the start) after DDP
     * synchronized: the backward pass is refused before it starts, and again on a second try (not
     * as "a second training pass"); a backward pass run before the change has its step refused, its
     * launched reduction dropped. Each refusal names the parameter as {@code block.getParameters()}
     * does and changes no parameter. With the change undone, the retried step and the next give the
     * parameters of a run that never changed anything, bit for bit.
     */
    private static void assertRefusedBeforeAnyUpdate(boolean freeze, String message)
            throws Exception {
        List<Map<String, float[]>> reference = trainAroundAChange(freeze, null);
        List<Map<String, float[]>> changed = trainAroundAChange(freeze, message);
        for (int r = 0; r < 2; r++) {
            Fixture.assertSame(reference.get(r), changed.get(r));
        }
    }

    /**
     * Steps on batches 0, 2 and 3; with {@code message} set, the first layer is unfrozen (or the
     * last frozen) before the backward pass of batch 1 and again between the backward pass of batch
     * 2 and its step, each refusal checked, then undone.
     */
    private static List<Map<String, float[]>> trainAroundAChange(boolean freeze, String message)
            throws Exception {
        return Ranks.run(
                2,
                (group, manager) -> {
                    int rank = group.getRank();
                    try (Model model = Model.newInstance("ddp")) {
                        SequentialBlock block = (SequentialBlock) Fixture.mlp();
                        Block layer = block.getChildren().get(freeze ? 4 : 0).getValue();
                        if (!freeze) {
                            layer.freezeParameters(true);
                        }
                        try (DistributedDataParallel t = smallBuckets(model, block, group, true)) {
                            Fixture.step(t, manager, 0, rank, BATCH);
                            Map<String, float[]> before = Fixture.snapshot(block);
                            if (message != null) {
                                layer.freezeParameters(freeze);
                                for (int i = 0; i < 2; i++) {
                                    IllegalStateException e =
                                            assertThrows(
                                                    IllegalStateException.class,
                                                    () -> Fixture.step(t, manager, 1, rank, BATCH));
                                    assertEquals(message, e.getMessage());
                                }
                                Fixture.assertSame(before, Fixture.snapshot(block));
                                layer.freezeParameters(!freeze);
                            }
                            try (NDManager m = manager.newSubManager()) {
                                Fixture.backward(t, Fixture.batch(m, 2, rank, BATCH));
                                if (message != null) {
                                    assertTrue(t.hasPendingUpdates(), "launched in backward");
                                    layer.freezeParameters(freeze);
                                    IllegalStateException e =
                                            assertThrows(IllegalStateException.class, t::step);
                                    assertEquals(message, e.getMessage());
                                    assertTrue(!t.hasPendingUpdates(), "reduction dropped");
                                    Fixture.assertSame(before, Fixture.snapshot(block));
                                    layer.freezeParameters(!freeze);
                                }
                                t.step();
                            }
                            Fixture.step(t, manager, 3, rank, BATCH);
                            return Fixture.snapshot(block);
                        }
                    }
                });
    }

    /**
     * The staged pass frees each stage's upstream gradient once that stage is backpropagated: as
     * each stage's backward ends, the pass holds the gradients of one boundary only (those the
     * stage below starts from; none after the first stage), however many stages there are, where it
     * used to hold every boundary's until the pass ended. The arrays the pass holds itself are
     * those under its manager less those of the stages' own managers still open (each stage's
     * graph), which the stages' probes name.
     */
    @Test
    void theBackwardPassHoldsOneBoundarysGradientsAtATime() {
        int n = 6;
        try (NDManager root = NDManager.newBaseManager(Device.cpu())) {
            List<NDManager> stageManagers = new ArrayList<>();
            List<Stage> stages = new ArrayList<>();
            for (int k = 0; k < n; k++) {
                Block b =
                        new SequentialBlock()
                                .add(
                                        new LambdaBlock(
                                                x -> {
                                                    stageManagers.add(x.head().getManager());
                                                    return x;
                                                }))
                                .add(Linear.builder().setUnits(Fixture.IN).build());
                b.setInitializer(Fixture.deterministic(), p -> true);
                b.initialize(root, DataType.FLOAT32, new Shape(BATCH, Fixture.IN));
                stages.add(Stage.of("stage" + k, b));
            }
            NDManager manager = root.newSubManager();
            StagedPass pass = new StagedPass(stages, new ParameterStore(root, false), manager);
            int[] held = new int[n];
            try (NDManager caller = root.newSubManager();
                    GradientCollector gc =
                            new StagedCollector(
                                    loss ->
                                            pass.backward(
                                                    loss,
                                                    k ->
                                                            held[k] =
                                                                    heldByPass(
                                                                            manager,
                                                                            stageManagers)),
                                    () -> {})) {
                NDArray x = Fixture.batch(caller, 0, 0, BATCH)[0].head();
                gc.backward(pass.forward(new NDList(x)).head().square().sum());
            }
            int[] expected = new int[n];
            for (int k = 1; k < n; k++) {
                expected[k] = 1; // the gradient of stage k's one input, for stage k - 1
            }
            assertArrayEquals(
                    expected, held, "arrays the pass held as each stage's backward ended");
        }
    }

    /** The arrays under a pass's manager that no stage's manager (those still open) holds. */
    private static int heldByPass(NDManager manager, List<NDManager> stageManagers) {
        int held = manager.getManagedArrays().size();
        // the last stage's inputs are the caller's: their manager is not the pass's
        for (NDManager m : stageManagers.subList(0, stageManagers.size() - 1)) {
            if (m.isOpen()) {
                held -= m.getManagedArrays().size();
            }
        }
        return held;
    }
}
