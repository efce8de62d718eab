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

import ai.djl.distributed.staged.Stage;
import ai.djl.distributed.staged.Stages;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.training.ParameterStore;

import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * DDP's reductions launched during a staged backward pass ({@link
 * DistributedDataParallel.Builder#optStagedBackward}): the {@link StagedPass}, the stage after
 * whose backward each parameter's gradient is final (the first stage that uses it), whether this
 * step's buckets were launched already, and whether a backward pass failed part way. Not
 * thread-safe: the training thread drives it.
 */
final class StagedReductions {

    private final StagedPass pass;
    private final int[] readyStage;
    private boolean launched;
    private boolean failed; // a backward pass failed part way: the gradients hold part of it

    private StagedReductions(StagedPass pass, int[] readyStage) {
        this.pass = pass;
        this.readyStage = readyStage;
    }

    /**
     * Prepares the staged reductions of a block's parameters.
     *
     * @param block the model's block
     * @param params the parameters whose gradients are reduced, in reducer order
     * @param store the trainer's parameter store
     * @param manager the trainer's manager
     * @return the staged reductions, or null when the block has no staged form
     */
    static StagedReductions of(
            Block block, Parameter[] params, ParameterStore store, NDManager manager) {
        List<Stage> stages = Stages.of(block).orElse(null);
        if (stages == null) {
            return null;
        }
        Map<Parameter, Integer> first = new IdentityHashMap<>();
        for (int k = stages.size() - 1; k >= 0; k--) {
            for (Parameter p : stages.get(k).getParameters()) {
                first.put(p, k);
            }
        }
        int[] readyStage = new int[params.length];
        for (int p = 0; p < params.length; p++) {
            // A parameter no stage lists is final only when the whole backward pass is.
            readyStage[p] = first.getOrDefault(params[p], 0);
        }
        return new StagedReductions(new StagedPass(stages, store, manager), readyStage);
    }

    /**
     * Runs a recorded forward pass, stage by stage.
     *
     * @param input the model's inputs
     * @return the outputs
     * @throws IllegalStateException after a synced backward pass not yet followed by a step, or
     *     after a backward pass that failed, until the gradients are zeroed
     */
    NDList forward(NDList input) {
        if (failed) {
            pass.abandon();
            throw new IllegalStateException(
                    "forward: the last backward pass failed part way, and the gradients hold part"
                            + " of it (expected: zeroGradients() on a gradient collector of this"
                            + " trainer before the next training pass)");
        }
        if (launched) {
            pass.abandon();
            throw new IllegalStateException(
                    "a second training pass before step() with optStagedBackward (expected: the"
                            + " micro-batches before the last inside noSync(), as PyTorch requires:"
                            + " the reductions of the last one start in its backward pass)");
        }
        return pass.forward(input);
    }

    /**
     * Runs the staged backward pass; with {@code reducer} set, starts the step's reduction and
     * launches each bucket as soon as its gradients are final.
     *
     * <p>Should the pass fail part way, the step's reduction is dropped ({@link Reducer#discard}:
     * no further bucket is sent, and this blocks until those sent are over, at most about the
     * group's timeout), and the next forward pass and step are refused until {@link #resetFailure}.
     * A rank whose pass fails while its peers' do not leaves them to fail at the group's timeout in
     * the buckets it never sends, as PyTorch's DDP does.
     *
     * @param loss the loss
     * @param reducer the reducer, or null when this pass does not synchronize (noSync, one rank)
     * @param source the gradients, for the reducer
     * @param update the optimizer's update, for the reducer
     * @throws IllegalStateException if no training forward pass is pending (nothing is started
     *     then)
     */
    void backward(
            NDArray loss, Reducer reducer, Reducer.GradientSource source, Reducer.Consumer update) {
        pass.checkPending();
        if (reducer != null) {
            reducer.begin(source, null, false, update);
            launched = true;
        }
        boolean[] ready = new boolean[readyStage.length];
        try {
            pass.backward(
                    loss,
                    k -> {
                        for (int p = 0; p < readyStage.length; p++) {
                            if (readyStage[p] == k) {
                                ready[p] = true;
                            }
                        }
                        if (reducer != null) {
                            reducer.launchReady(ready);
                        }
                    });
        } catch (RuntimeException | Error e) {
            // The stages done before the failure added to the gradients, and their buckets may be
            // on the wire: a step now would apply part of a pass.
            failed = true;
            if (launched) {
                launched = false;
                reducer.discard();
            }
            throw e;
        }
    }

    /** Drops a forward pass that will not be backpropagated, freeing its graph. */
    void abandon() {
        pass.abandon();
    }

    /**
     * Refuses a step after a backward pass that failed part way.
     *
     * @throws IllegalStateException if the last backward pass failed and the gradients were not
     *     zeroed since
     */
    void checkNotFailed() {
        if (failed) {
            throw new IllegalStateException(
                    "step: the last backward pass failed part way, and the gradients hold part of"
                            + " it (expected: zeroGradients() on a gradient collector of this"
                            + " trainer before the next step)");
        }
    }

    /** Forgets a failed backward pass: its gradients were zeroed. */
    void resetFailure() {
        failed = false;
    }

    /**
     * Returns whether this step's reduction was started by a backward pass, and forgets it: the
     * step completes it.
     *
     * @return whether a synced backward pass launched it
     */
    boolean takeLaunched() {
        boolean was = launched;
        launched = false;
        return was;
    }
}
