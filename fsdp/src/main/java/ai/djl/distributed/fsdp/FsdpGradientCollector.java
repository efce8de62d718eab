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

import ai.djl.ndarray.NDArray;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.training.GradientCollector;

/**
 * FSDP's gradient collector: turns grad mode on for this thread while open (as DJL's does) and runs
 * the trainer's staged backward. It never constructs DJL's own collector, of which only one may
 * exist per JVM: in-process multi-rank tests run several trainers at once.
 */
final class FsdpGradientCollector implements GradientCollector {

    private final FullyShardedDataParallel trainer;
    private final boolean gradMode;
    private boolean closed;

    FsdpGradientCollector(FullyShardedDataParallel trainer) {
        this.trainer = trainer;
        gradMode = JniUtils.isGradMode();
        JniUtils.setGradMode(true);
    }

    /**
     * Backpropagates from a loss computed from the trainer's last forward pass, unit by unit,
     * reducing each unit's gradients onto the shards. A collective: blocks until every rank's
     * reductions of this pass are done (bounded by the group's timeout).
     *
     * @param target the loss
     */
    @Override
    public void backward(NDArray target) {
        trainer.backward(target);
    }

    /** Sets the shards' accumulated gradients to zero. */
    @Override
    public void zeroGradients() {
        trainer.zeroGradients();
    }

    /**
     * Restores this thread's grad mode, and drops a forward pass of the trainer that was never
     * backpropagated (a loss that failed, say), so the next forward pass starts clean.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            trainer.collectorClosed();
        } finally {
            JniUtils.setGradMode(gradMode);
        }
    }
}
