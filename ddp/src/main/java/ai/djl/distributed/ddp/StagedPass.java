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

import ai.djl.distributed.parallel.Segments;
import ai.djl.distributed.staged.Stage;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.training.ParameterStore;

import java.util.List;
import java.util.function.IntConsumer;

/**
 * DDP's staged forward and backward pass ({@link
 * DistributedDataParallel.Builder#optStagedBackward}): every stage records from a detached copy of
 * the previous stage's outputs, and the backward pass runs stage by stage from the last ({@link
 * Segments}), telling after each stage that its parameters' gradients are final (those no earlier
 * stage uses), so that their buckets' reductions start while the earlier stages are still in
 * backward, as PyTorch's autograd hooks let its DDP do. Memory is that of an ordinary training
 * step: each stage's graph is kept until its backward, and the gradient a stage receives until the
 * stage before it has been backpropagated from it. The last stage's outputs live in the manager of
 * the caller's inputs, as a DJL forward pass's do. Not thread-safe: the training thread drives it.
 */
final class StagedPass {

    private final List<Stage> stages;
    private final ParameterStore store;
    private final NDManager manager;

    private NDManager pass;
    private NDList[] inputs;
    private NDList[] outputs;
    private NDManager[] managers;

    StagedPass(List<Stage> stages, ParameterStore store, NDManager manager) {
        this.stages = stages;
        this.store = store;
        this.manager = manager;
    }

    /** Whether a forward pass waits for its backward. */
    boolean isPending() {
        return inputs != null;
    }

    /** Runs a recorded forward pass, stage by stage; returns the last stage's outputs. */
    NDList forward(NDList input) {
        abandon();
        int n = stages.size();
        pass = manager.newSubManager();
        inputs = new NDList[n];
        outputs = new NDList[n];
        managers = new NDManager[n];
        NDManager callers = input.head().getManager();
        NDList x = input;
        for (int k = 0; k < n; k++) {
            boolean last = k == n - 1;
            NDManager sm = last ? callers : pass.newSubManager();
            managers[k] = last ? null : sm;
            inputs[k] = n == 1 ? input : Segments.detach(x, sm, k > 0);
            outputs[k] = stages.get(k).forward(store, inputs[k], true);
            x = outputs[k];
        }
        return x;
    }

    /**
     * Backpropagates from a loss computed from the last forward pass's outputs, stage by stage.
     *
     * @param loss the loss
     * @param stageDone receives each stage's index once its backward is done, last stage first
     * @throws IllegalStateException if no forward pass is pending
     */
    void backward(NDArray loss, IntConsumer stageDone) {
        checkPending();
        int n = stages.size();
        try {
            Segments.backwardFrom(loss);
            NDList g = n > 1 ? Segments.gradients(inputs[n - 1], pass) : null;
            stageDone.accept(n - 1);
            for (int k = n - 2; k >= 0; k--) {
                Segments.backwardThrough(outputs[k], g);
                // Used up: freed now rather than with the pass, one boundary's at a time.
                Segments.free(g);
                g = k > 0 ? Segments.gradients(inputs[k], pass) : null;
                managers[k].close();
                stageDone.accept(k);
            }
        } finally {
            abandon();
        }
    }

    /**
     * Checks that a forward pass waits for its backward.
     *
     * @throws IllegalStateException if none does
     */
    void checkPending() {
        if (inputs == null) {
            throw new IllegalStateException(
                    "backward: no training forward pass of this trainer to backpropagate (expected:"
                            + " trainer.forward(...) inside the gradient collector, then backward)");
        }
    }

    /** Drops a forward pass that was never backpropagated. */
    void abandon() {
        if (pass != null) {
            pass.close();
        }
        pass = null;
        inputs = null;
        outputs = null;
        managers = null;
    }
}
