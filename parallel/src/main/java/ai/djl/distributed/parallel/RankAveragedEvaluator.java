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
package ai.djl.distributed.parallel;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.evaluator.Evaluator;

/**
 * An evaluator that reports its average over the ranks after {@link RankAverages#average}, and its
 * own value otherwise: made by {@link RankAverages#wrap(Evaluator)}. Every call is forwarded to the
 * wrapped one (the shared behaviour lives in {@link RankAverages}); its arrays are the wrapped
 * one's. Thread-safe as far as the wrapped one is.
 */
public final class RankAveragedEvaluator extends Evaluator {

    private final RankAverages.Tally tally;

    RankAveragedEvaluator(RankAverages.Tally tally) {
        super(tally.delegate.getName());
        this.tally = tally;
    }

    /**
     * Returns the wrapped evaluator.
     *
     * @return the user's evaluator, which this one forwards to
     */
    public Evaluator getDelegate() {
        return tally.delegate;
    }

    /** {@inheritDoc} */
    @Override
    public NDArray evaluate(NDList labels, NDList predictions) {
        return tally.evaluate(labels, predictions);
    }

    /** {@inheritDoc} */
    @Override
    public void addAccumulator(String key) {
        tally.addAccumulator(key);
    }

    /** {@inheritDoc} */
    @Override
    public void updateAccumulators(String[] keys, NDList labels, NDList predictions) {
        tally.updateAccumulators(keys, labels, predictions);
    }

    /** {@inheritDoc} */
    @Override
    public void updateAccumulator(String key, NDList labels, NDList predictions) {
        tally.updateAccumulator(key, labels, predictions);
    }

    /** {@inheritDoc} */
    @Override
    public void resetAccumulator(String key) {
        tally.resetAccumulator(key);
    }

    /** {@inheritDoc} */
    @Override
    public float getAccumulator(String key) {
        return tally.get(key);
    }
}
