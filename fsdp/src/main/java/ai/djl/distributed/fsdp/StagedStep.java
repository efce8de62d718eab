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

import ai.djl.distributed.parallel.InPlace;
import ai.djl.distributed.parallel.Segments;
import ai.djl.distributed.staged.Stage;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Parameter;
import ai.djl.pytorch.jni.JniUtils;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * Runs a model stage by stage for FSDP, gathering and freeing units around each stage, and runs the
 * backward pass segment by segment from the last stage, reducing each unit's gradients as soon as
 * the segment of its first stage is done.
 *
 * <p>The segmented backward rests on two facts of DJL's PyTorch engine (checked in {@code
 * StagedBackwardTest}): backward with an explicit upstream gradient ({@code JniUtils.backward}),
 * and gradients that accumulate over several backward calls. Each stage but the first starts from a
 * detached copy of the previous stage's outputs that takes gradients; the gradient it receives is
 * the upstream gradient of the previous stage.
 *
 * <p>Without recompute, {@link ShardingStrategy#FULL_SHARD} frees each unit's gathered memory in
 * place after its forward pass ({@link FlatUnit#evict}), and the backward pass gathers it again
 * into the same storage, which autograd's saved views still reference, before the unit's segment.
 *
 * <p>With recompute (activation checkpointing, asked for, or FULL_SHARD where memory cannot be
 * freed in place), the forward pass runs every stage but the last without recording and keeps only
 * the stages' inputs; the backward pass runs each stage again, recording, from its stored input,
 * then backpropagates through it. The torch random generator is seeded identically for a stage's
 * two runs, so dropout draws the same masks. The last stage always records: its outputs are what
 * the caller computes the loss from, and they live in the manager of the caller's inputs, as a DJL
 * forward pass's do.
 *
 * <p>Every unit is gathered and reduced in every pass, in stage order, whatever the stages use:
 * ranks whose forward passes differ cannot hang each other. Not thread-safe: the training thread
 * drives it.
 */
final class StagedStep {

    private static final long SEED_STRIDE = 0x9E3779B97F4A7C15L;

    private final List<Stage> stages;
    private final UnitLayout layout;
    private final List<FlatUnit> units;
    private final ShardedParameterStore store;
    private final NDManager manager;
    private final boolean recompute;
    private final StorageResize evict; // null unless units are freed after forward, not recomputed
    private final boolean reshard;
    private final long seedBase;
    private long passes;

    private final ArrayDeque<FlatUnit> reducing = new ArrayDeque<>();
    private NDManager pass;
    private NDList[] inputs;
    private NDList[] outputs;
    private NDManager[] stageManagers;
    private boolean collected;
    private long passSeed;

    StagedStep(
            List<Stage> stages,
            UnitLayout layout,
            List<FlatUnit> units,
            ShardedParameterStore store,
            NDManager manager,
            ShardingStrategy strategy,
            boolean checkpointing,
            StorageResize resize,
            long seedBase) {
        this.stages = stages;
        this.layout = layout;
        this.units = units;
        this.store = store;
        this.manager = manager;
        this.reshard = strategy.reshardsAfterForward();
        // Resharding frees a unit after its forward: where the memory under autograd's saved
        // references can be freed in place, the backward gathers into it again; otherwise, or when
        // asked, it recomputes each stage's forward (activation checkpointing).
        boolean staged = stages.size() > 1;
        this.recompute = staged && (checkpointing || (reshard && resize == null));
        this.evict = staged && reshard && !recompute ? resize : null;
        this.seedBase = seedBase;
    }

    /**
     * The seed of the last training pass: stage {@code k} seeds the torch generator with it + k.
     */
    long lastPassSeed() {
        return passSeed;
    }

    /** Whether a training pass waits for its backward. */
    boolean isPending() {
        return inputs != null;
    }

    /**
     * Runs a training forward pass. A pass run inside a gradient collector must be backpropagated,
     * or abandoned (the collector closed), before the next: its units' gradients come from one
     * backward pass each. A pass outside any collector is dropped by the next.
     *
     * @param input the model's inputs; the outputs are attached to their manager
     * @param inCollector whether a gradient collector of the trainer is open (grad mode alone does
     *     not tell: PyTorch's is on by default on threads DJL never touched)
     * @return the last stage's outputs
     * @throws IllegalStateException if the last collected pass is still waiting for its backward
     */
    NDList forward(NDList input, boolean inCollector) {
        refuseIfCollectedPassPending(
                "forward",
                "one forward pass per backward; for a loss over several inputs, concatenate them"
                        + " into one batch, or call backward after each forward: gradients add up"
                        + " until step()");
        abandon();
        try {
            return runForward(input, inCollector);
        } catch (RuntimeException | Error e) {
            try {
                endPass(); // nothing half gathered stays behind a failed pass
            } catch (RuntimeException | Error ex) {
                e.addSuppressed(ex);
            }
            throw e;
        }
    }

    private NDList runForward(NDList input, boolean inCollector) {
        int n = stages.size();
        pass = manager.newSubManager();
        inputs = new NDList[n];
        outputs = new NDList[n];
        stageManagers = new NDManager[n];
        passSeed = seedBase + SEED_STRIDE * passes++;
        collected = inCollector;
        store.setTrainingViews(true);
        NDManager callers = input.head().getManager();
        NDList x = input;
        for (int k = 0; k < n; k++) {
            gatherStage(k);
            prefetch(k + 1);
            boolean last = k == n - 1;
            if (recompute && !last) {
                inputs[k] = x;
                NDManager sm = pass.newSubManager();
                boolean mode = JniUtils.isGradMode();
                try {
                    JniUtils.setGradMode(false);
                    seed(k);
                    NDList out = stages.get(k).forward(store, Segments.detach(x, sm, false), true);
                    // Copies where units are released below: an output may view the stage's
                    // gathered parameters (a parameter handed on as it is, a slice of one), whose
                    // buffer goes back to the pool and is gathered into again for another unit
                    // while the next stage reads it, and kept as that stage's stored input.
                    x = reshard ? copies(out, pass) : Segments.detach(out, pass, false);
                } finally {
                    JniUtils.setGradMode(mode);
                    sm.close();
                }
                releaseAfterForward(k);
                continue;
            }
            NDManager sm = last ? callers : pass.newSubManager();
            stageManagers[k] = last ? null : sm;
            NDList in = n == 1 ? input : Segments.detach(x, sm, k > 0);
            inputs[k] = in;
            NDList out = stages.get(k).forward(store, in, true);
            outputs[k] = out;
            x = out;
            if (evict != null && !last) {
                evictAfterForward(k, out);
            }
        }
        return x;
    }

    /**
     * Runs an inference forward pass (no gradients): each unit gathered before its first stage and
     * freed after its last.
     *
     * @param input the model's inputs
     * @param training whether dropout applies
     * @return the outputs, in the manager of the inputs
     * @throws IllegalStateException if the last collected pass is still waiting for its backward
     */
    NDList evaluate(NDList input, boolean training) {
        refuseIfCollectedPassPending(
                "evaluate", "the backward pass of the training forward pass before evaluate");
        abandon();
        store.setTrainingViews(false);
        NDManager callers = input.head().getManager();
        NDList x = input;
        try {
            for (int k = 0; k < stages.size(); k++) {
                gatherStage(k);
                prefetch(k + 1);
                x = stages.get(k).forward(store, x, training);
                if (layout.unitsEndingAt(k).length > 0) {
                    // An output may view a parameter of a unit released below (a parameter
                    // handed on as it is, a slice of one): the release closes it with the unit's
                    // views, and the pool gathers another unit into its memory. Copies instead,
                    // as runForward does under recompute.
                    x = copies(x, callers);
                    releaseUnitsEndingAt(k);
                }
            }
            return x;
        } finally {
            units.forEach(FlatUnit::release);
        }
    }

    /**
     * Backpropagates from a loss computed from the last forward pass's outputs, stage by stage, and
     * leaves every unit's averaged gradient added to its shard's gradient.
     *
     * @param loss the loss
     * @throws IllegalStateException if no training forward pass is pending
     */
    void backward(NDArray loss) {
        if (inputs == null) {
            throw new IllegalStateException(
                    "backward: no training forward pass of this trainer to backpropagate (expected:"
                            + " trainer.forward(...) inside the gradient collector, then backward)");
        }
        int n = stages.size();
        try {
            Segments.backwardFrom(loss);
            NDList g = n > 1 ? Segments.gradients(inputs[n - 1], pass) : null;
            reduceAfterBackward(n - 1);
            for (int k = n - 2; k >= 0; k--) {
                gatherStage(k);
                if (k > 0) {
                    gatherStage(k - 1);
                }
                NDManager sm = recompute ? pass.newSubManager() : stageManagers[k];
                List<NDArray[]> running = List.of();
                try {
                    NDList in;
                    NDList out;
                    if (recompute) {
                        in = Segments.detach(inputs[k], sm, k > 0);
                        running = saveRunningStatistics(k, sm);
                        boolean mode = JniUtils.isGradMode();
                        try {
                            JniUtils.setGradMode(true);
                            seed(k);
                            out = stages.get(k).forward(store, in, true);
                        } finally {
                            JniUtils.setGradMode(mode);
                        }
                    } else {
                        in = inputs[k];
                        out = outputs[k];
                        // the graph reads the units gathered again through its saved references
                        for (int u : layout.unitsOfStage(k)) {
                            units.get(u).awaitGather();
                        }
                    }
                    Segments.backwardThrough(out, g);
                    // Used up: freed now rather than with the pass, one boundary's at a time.
                    Segments.free(g);
                    g = k > 0 ? Segments.gradients(in, pass) : null;
                } finally {
                    try {
                        restoreRunningStatistics(running);
                    } finally {
                        sm.close();
                    }
                }
                reduceAfterBackward(k);
            }
            while (!reducing.isEmpty()) {
                reducing.poll().finishReductions();
            }
        } catch (RuntimeException | Error e) {
            // The reductions already started carry part of this pass: waited out and dropped, so
            // that no later step folds them in.
            for (FlatUnit u : units) {
                try {
                    u.discardReductions();
                } catch (RuntimeException | Error ex) {
                    e.addSuppressed(ex);
                }
            }
            throw e;
        } finally {
            reducing.clear();
            endPass();
        }
    }

    /**
     * Refuses a pass while one run inside a gradient collector waits for its backward: its stages'
     * gradients would be lost (with recompute its inputs are all that is kept, and the units it
     * gathered would be freed by the new pass), and the backward would then find no pass at all.
     */
    private void refuseIfCollectedPassPending(String call, String expected) {
        if (inputs != null && collected) {
            throw new IllegalStateException(
                    call
                            + ": the last training forward pass has not been backpropagated"
                            + " (expected: "
                            + expected
                            + ")");
        }
    }

    /** Drops a training pass that was never backpropagated, freeing what it gathered. */
    void abandon() {
        if (inputs != null) {
            endPass();
        }
    }

    private void endPass() {
        RuntimeException failure = null;
        try {
            // Every unit released even after one fails; the first failure is thrown.
            for (FlatUnit u : units) {
                try {
                    u.release();
                } catch (RuntimeException e) {
                    if (failure == null) {
                        failure = e;
                    } else {
                        failure.addSuppressed(e);
                    }
                }
            }
        } finally {
            try {
                if (stageManagers != null) {
                    for (NDManager sm : stageManagers) {
                        if (sm != null && sm.isOpen()) {
                            sm.close();
                        }
                    }
                }
                if (pass != null) {
                    pass.close();
                }
            } finally {
                pass = null;
                inputs = null;
                outputs = null;
                stageManagers = null;
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void gatherStage(int k) {
        for (int u : layout.unitsOfStage(k)) {
            units.get(u).gather();
        }
    }

    /** Starts gathering the units the next stage needs, so that it overlaps this stage. */
    private void prefetch(int k) {
        if (k < stages.size()) {
            gatherStage(k);
        }
    }

    private void releaseAfterForward(int k) {
        // Units the last stage uses stay: its forward records, and its backward comes first.
        if (reshard) {
            releaseUnitsEndingAt(k);
        }
    }

    private void releaseUnitsEndingAt(int k) {
        for (int u : layout.unitsEndingAt(k)) {
            units.get(u).release();
        }
    }

    // Copies of arrays that share no memory with them, in a manager, with grad mode off: no
    // history links them to the arrays they copy.
    private static NDList copies(NDList arrays, NDManager to) {
        boolean mode = JniUtils.isGradMode();
        NDList out = new NDList(arrays.size());
        try {
            JniUtils.setGradMode(false);
            for (NDArray a : arrays) {
                NDArray c = a.duplicate();
                c.attach(to);
                out.add(c);
            }
        } finally {
            JniUtils.setGradMode(mode);
        }
        return out;
    }

    private void evictAfterForward(int k, NDList out) {
        // Units the last stage uses stay: its backward comes first. So does a unit whose memory
        // the stage's outputs view: the next stage reads them.
        for (int u : layout.unitsEndingAt(k)) {
            units.get(u).evict(evict, out);
        }
    }

    private void reduceAfterBackward(int k) {
        for (int u = 0; u < units.size(); u++) {
            if (layout.units().get(u).firstStage() == k) {
                units.get(u).reduce();
                reducing.add(units.get(u));
            }
        }
        // One reduction in flight while the next segment computes; the ones before it are
        // folded into their shards now, so that their full-size gradient buffers are freed
        // as the backward pass goes rather than all held to its end.
        while (reducing.size() > 1) {
            reducing.poll().finishReductions();
        }
    }

    /**
     * Copies the stage's running statistics (BatchNorm's mean and variance), which a training
     * forward pass updates in place: the recompute runs the stage's forward pass a second time, and
     * its update is undone afterwards, so the statistics end as a plain trainer's.
     */
    private List<NDArray[]> saveRunningStatistics(int k, NDManager sm) {
        List<NDArray[]> saved = new ArrayList<>();
        for (Parameter p : stages.get(k).getParameters()) {
            Parameter.Type type = p.getType();
            if ((type == Parameter.Type.RUNNING_MEAN || type == Parameter.Type.RUNNING_VAR)
                    && p.isInitialized()) {
                NDArray live = p.getArray();
                NDArray copy = live.duplicate();
                copy.attach(sm);
                saved.add(new NDArray[] {live, copy});
            }
        }
        return saved;
    }

    /**
     * Writes the saved statistics back in place; after the stage's backward, when its graph, which
     * may hold the live arrays, is spent.
     */
    private static void restoreRunningStatistics(List<NDArray[]> saved) {
        for (NDArray[] s : saved) {
            InPlace.copy(s[1], s[0], "running statistic " + s[0].getName());
        }
    }

    private void seed(int k) {
        if (recompute) {
            JniUtils.setSeed(passSeed + k);
        }
    }
}
