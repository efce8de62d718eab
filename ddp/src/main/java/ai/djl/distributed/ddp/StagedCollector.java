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

import ai.djl.ndarray.NDArray;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.training.GradientCollector;

import java.util.function.Consumer;

/**
 * DDP's gradient collector for a staged backward pass: turns grad mode on for this thread while
 * open (as DJL's does), hands the loss to the staged backward, and zeroes the trainer's gradients
 * when asked. It never constructs DJL's own collector, of which only one may exist per JVM.
 */
final class StagedCollector implements GradientCollector {

    private final Consumer<NDArray> backward;
    private final Runnable zeroGradients;
    private final boolean gradMode;

    StagedCollector(Consumer<NDArray> backward, Runnable zeroGradients) {
        this.backward = backward;
        this.zeroGradients = zeroGradients;
        gradMode = JniUtils.isGradMode();
        JniUtils.setGradMode(true);
    }

    /** {@inheritDoc} */
    @Override
    public void backward(NDArray target) {
        backward.accept(target);
    }

    /**
     * Sets the trainer's gradients to zero, and lets it train again after a backward pass that
     * failed part way. Steps need not call it: the optimizer's update zeroes each gradient, as with
     * DJL's trainer.
     */
    @Override
    public void zeroGradients() {
        zeroGradients.run();
    }

    /** Restores this thread's grad mode. */
    @Override
    public void close() {
        JniUtils.setGradMode(gradMode);
    }
}
