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
package ai.djl.distributed.examples;

import ai.djl.training.tracker.Tracker;

import java.util.function.DoubleSupplier;

/**
 * A learning-rate schedule: linear warm-up from 0 to the peak over the first steps, then a cosine
 * decay to a tenth of the peak at the end of training. The end is reached at the last step, or when
 * the time budget runs out, whichever comes first: progress is the larger of the step and the time
 * fractions, so that a run bounded by time still anneals.
 */
public final class WarmupCosineTracker implements Tracker {

    private final float peak;
    private final int warmup;
    private final int steps;
    private final DoubleSupplier timeFraction;

    /**
     * Creates the schedule.
     *
     * @param peak the peak learning rate
     * @param warmup the number of warm-up steps
     * @param steps the total number of steps, or 0 when only time bounds the run
     * @param timeFraction the fraction of the time budget spent so far (may exceed 1)
     */
    public WarmupCosineTracker(float peak, int warmup, int steps, DoubleSupplier timeFraction) {
        this.peak = peak;
        this.warmup = warmup;
        this.steps = steps;
        this.timeFraction = timeFraction;
    }

    /** {@inheritDoc} */
    @Override
    public float getNewValue(int numUpdate) {
        if (numUpdate <= warmup) {
            return peak * numUpdate / warmup;
        }
        double progress = timeFraction.getAsDouble();
        if (steps > warmup) {
            progress = Math.max(progress, (double) (numUpdate - warmup) / (steps - warmup));
        }
        progress = Math.min(1, Math.max(0, progress));
        double floor = peak / 10.0;
        return (float) (floor + 0.5 * (peak - floor) * (1 + Math.cos(Math.PI * progress)));
    }
}
