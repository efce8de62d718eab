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

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.training.evaluator.Evaluator;
import ai.djl.training.loss.Loss;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Evaluators (and the loss) averaged over ranks for reporting. Each evaluator of the training
 * configuration is wrapped ({@link #wrap(Evaluator)}, {@link #wrap(Loss)}); the wrapper does what
 * the evaluator does and counts what it saw. At an epoch's end {@link #average} all-reduces every
 * wrapped evaluator's value weighted by that count (samples, or batches for a loss, as DJL averages
 * a loss per batch), and until the next update or reset the wrapper reports the average over all
 * ranks instead of its own.
 *
 * <p>Wrapping and averaging happen on the training thread; the wrappers' accumulators may be
 * updated from DJL's evaluation threads, as DJL's own are.
 */
public final class RankAverages {

    private final ProcessGroup group;
    private final List<Tally> tallies = new ArrayList<>();

    /**
     * Creates the averages of one trainer.
     *
     * @param group the ranks to average over; only {@link #average} uses it
     */
    public RankAverages(ProcessGroup group) {
        this.group = group;
    }

    /**
     * Wraps an evaluator, weighting its value by the samples it saw.
     *
     * @param evaluator the user's evaluator; the wrapper forwards to it
     * @return the wrapper to hand to DJL's trainer
     */
    public RankAveragedEvaluator wrap(Evaluator evaluator) {
        Tally t = new Tally(evaluator, false);
        tallies.add(t);
        return new RankAveragedEvaluator(t);
    }

    /**
     * Wraps a loss, weighting its value by the batches it saw (DJL averages a loss per batch).
     *
     * @param loss the user's loss; the wrapper forwards to it
     * @return the wrapper to hand to DJL's trainer
     */
    public RankAveragedLoss wrap(Loss loss) {
        Tally t = new Tally(loss, true);
        tallies.add(t);
        return new RankAveragedLoss(t);
    }

    /**
     * Averages the named accumulators over the ranks: one all-reduce, blocking until every rank has
     * called it (bounded by the group's timeout). Every rank must call it at the same point, with
     * the same keys.
     *
     * @param manager where the temporary array lives (closed before it returns)
     * @param keys the accumulators, e.g. {@code train/epoch}
     */
    public void average(NDManager manager, String... keys) {
        if (group.getSize() == 1) {
            return;
        }
        double[] sums = new double[2 * tallies.size() * keys.length];
        int k = 0;
        for (Tally t : tallies) {
            for (String key : keys) {
                double w = t.weights.getOrDefault(key, 0.0);
                sums[k++] = w == 0 ? 0 : t.delegate.getAccumulator(key) * w;
                sums[k++] = w;
            }
        }
        // On the group's own device for values without one (the CPU where it has a CPU backend).
        try (NDManager m = manager.newSubManager(group.getDefaultDevice())) {
            NDArray a = m.create(sums);
            group.allReduce(a, ReduceOp.SUM);
            sums = a.toDoubleArray();
        }
        k = 0;
        for (Tally t : tallies) {
            for (String key : keys) {
                double sum = sums[k++];
                double w = sums[k++];
                if (w > 0 && t.weights.containsKey(key)) {
                    t.global.put(key, (float) (sum / w));
                }
            }
        }
    }

    /**
     * What one wrapped evaluator saw, and its last average over the ranks: the behaviour both
     * wrappers ({@link RankAveragedEvaluator}, {@link RankAveragedLoss}) forward to.
     */
    static final class Tally {

        final Evaluator delegate;
        final boolean perBatch;
        final Map<String, Double> weights = new ConcurrentHashMap<>();
        final Map<String, Float> global = new ConcurrentHashMap<>();

        Tally(Evaluator delegate, boolean perBatch) {
            this.delegate = delegate;
            this.perBatch = perBatch;
        }

        NDArray evaluate(NDList labels, NDList predictions) {
            return delegate.evaluate(labels, predictions);
        }

        void addAccumulator(String key) {
            delegate.addAccumulator(key);
            added(key);
        }

        void updateAccumulators(String[] keys, NDList labels, NDList predictions) {
            delegate.updateAccumulators(keys, labels, predictions);
            updated(keys, labels);
        }

        void updateAccumulator(String key, NDList labels, NDList predictions) {
            delegate.updateAccumulator(key, labels, predictions);
            updated(new String[] {key}, labels);
        }

        void resetAccumulator(String key) {
            delegate.resetAccumulator(key);
            added(key);
        }

        private void added(String key) {
            weights.put(key, 0.0);
            global.remove(key);
        }

        private void updated(String[] keys, NDList labels) {
            double w = perBatch ? 1 : samples(labels);
            for (String key : keys) {
                weights.merge(key, w, Double::sum);
                global.remove(key);
            }
        }

        float get(String key) {
            Float g = global.get(key);
            return g != null ? g : delegate.getAccumulator(key);
        }

        private static double samples(NDList labels) {
            if (labels == null || labels.isEmpty() || labels.head().getShape().dimension() == 0) {
                return 1;
            }
            return labels.head().getShape().get(0);
        }
    }
}
