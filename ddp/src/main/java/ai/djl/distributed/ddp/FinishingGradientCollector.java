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
import ai.djl.training.GradientCollector;

/**
 * A gradient collector that runs an action before each backward pass: with {@link
 * DistributedDataParallel.Builder#optOverlapWithForward}, completing the updates still pending, so
 * that none lands after the next gradients.
 */
final class FinishingGradientCollector implements GradientCollector {

    private final GradientCollector collector;
    private final Runnable beforeBackward;

    FinishingGradientCollector(GradientCollector collector, Runnable beforeBackward) {
        this.collector = collector;
        this.beforeBackward = beforeBackward;
    }

    /** {@inheritDoc} */
    @Override
    public void backward(NDArray target) {
        beforeBackward.run();
        collector.backward(target);
    }

    /** {@inheritDoc} */
    @Override
    public void zeroGradients() {
        collector.zeroGradients();
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        collector.close();
    }
}
