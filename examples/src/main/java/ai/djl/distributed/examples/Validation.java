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

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.transformer.CausalLmLoss;
import ai.djl.distributed.transformer.data.TokenWindowDataset;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDArrays;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Record;

/**
 * Measures the validation loss on a fixed, evenly spaced selection of validation windows, so that
 * successive measurements of a run compare the same text. In a data-parallel run the ranks share
 * the batches out and sum their losses, so a measurement takes 1/N of the time; every rank must
 * call {@link #score} as often as every other. Every rank runs as many forward passes as every
 * other (one rank may repeat a batch and ignore it): FSDP's forward passes are collectives.
 */
final class Validation {

    private final TokenWindowDataset dataset;
    private final int batch;
    private final ProcessGroup group;
    private final CausalLmLoss loss = new CausalLmLoss();

    Validation(TokenWindowDataset dataset, int batch, ProcessGroup group) {
        this.dataset = dataset;
        this.batch = batch;
        this.group = group;
    }

    /** A validation loss and the target tokens it was measured on. */
    static final class Score {

        final double loss;
        final int[] targets;

        Score(double loss, int[] targets) {
            this.loss = loss;
            this.targets = targets;
        }
    }

    /**
     * Returns the mean loss over {@code batches} batches of windows spread evenly over the
     * validation split (all of them if there are fewer), without dropout or gradients. Rank r
     * evaluates batches r, r + N, ...; the targets cover every batch on every rank.
     */
    Score score(Trainer trainer, int batches) {
        long windows = Math.min(dataset.size(), (long) batches * batch);
        int context = dataset.getContextLength();
        int[] targets = new int[Math.toIntExact(windows * context)];
        double sum = 0;
        int ranks = group.getSize();
        long mine = 0;
        NDList repeat = null;
        try (NDManager m = trainer.getManager().newSubManager()) {
            for (long first = 0, b = 0; first < windows; first += batch, b++) {
                try (NDManager step = m.newSubManager()) {
                    NDList xs = new NDList();
                    NDList ys = new NDList();
                    long n = Math.min(batch, windows - first);
                    for (long i = first; i < first + n; i++) {
                        Record r = dataset.get(step, i * dataset.size() / windows);
                        xs.add(r.getData().head());
                        ys.add(r.getLabels().head());
                    }
                    NDArray y = NDArrays.stack(ys);
                    if (b % ranks == group.getRank()) {
                        NDList logits = trainer.evaluate(new NDList(NDArrays.stack(xs)));
                        sum += loss.evaluate(new NDList(y), logits).getFloat() * (double) n;
                        mine++;
                    }
                    if (b == 0) {
                        NDArray x0 = NDArrays.stack(xs);
                        x0.attach(m);
                        repeat = new NDList(x0);
                    }
                    long[] ids = y.toLongArray();
                    for (int j = 0; j < ids.length; j++) {
                        targets[Math.toIntExact(first * context) + j] = (int) ids[j];
                    }
                }
            }
            long count = (windows + batch - 1) / batch;
            long rounds = (count + ranks - 1) / ranks;
            if (mine < rounds && repeat != null) {
                trainer.evaluate(repeat);
            }
            if (ranks > 1) {
                NDArray total = m.create(new double[] {sum});
                group.allReduce(total, ReduceOp.SUM);
                sum = total.getDouble();
            }
        }
        return new Score(sum / windows, targets);
    }
}
