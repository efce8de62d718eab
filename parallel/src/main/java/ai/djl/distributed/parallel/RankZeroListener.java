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

import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.listener.LoggingTrainingListener;
import ai.djl.training.listener.MemoryTrainingListener;
import ai.djl.training.listener.SaveModelTrainingListener;
import ai.djl.training.listener.TimeMeasureTrainingListener;
import ai.djl.training.listener.TrainingListener;

import java.util.ArrayList;
import java.util.List;

/**
 * A training listener that runs on rank 0 only: wrap a listener that prints, writes files or
 * reports somewhere once per job ({@code new RankZeroListener(myCsvWriter)}) and add the wrapper to
 * the training configuration. A data-parallel trainer's configuration (DDP's) keeps it, through
 * {@link #select}, on rank 0 only; on rank 0, and outside such a trainer, it forwards every event
 * to the wrapped listener. DJL's own listeners that print or write ({@link #printsOrWrites}) are
 * treated as if wrapped.
 *
 * <p>On rank 0 of several, DJL's logging listener is wrapped so that its progress bars reach 100%:
 * DJL sizes them by the whole dataset, while the rank's batches cover its share, about 1/N of it.
 *
 * <p>Thread-safe as far as the wrapped listener is; events are forwarded on the calling thread.
 */
public final class RankZeroListener implements TrainingListener {

    private final TrainingListener delegate;
    private final int progressShare;

    /**
     * Marks a listener as one that runs on rank 0 only.
     *
     * @param delegate the listener; events are forwarded to it
     * @throws IllegalArgumentException if it is null
     */
    public RankZeroListener(TrainingListener delegate) {
        this(delegate, 1);
    }

    /** A rank-0 listener whose batches' progress totals are divided by {@code progressShare}. */
    RankZeroListener(TrainingListener delegate, int progressShare) {
        if (delegate == null) {
            throw new IllegalArgumentException("listener: null (expected: a TrainingListener)");
        }
        this.delegate = delegate instanceof RankZeroListener r ? r.delegate : delegate;
        this.progressShare = progressShare;
    }

    /**
     * Returns the wrapped listener.
     *
     * @return the listener events are forwarded to
     */
    public TrainingListener getDelegate() {
        return delegate;
    }

    /**
     * Returns the listeners one rank runs: on rank 0 all of them (DJL's logging listener wrapped so
     * that its progress bars count the rank's share), on other ranks all but the {@link
     * RankZeroListener}s and DJL's listeners that print or write.
     *
     * @param listeners the training configuration's listeners, in order
     * @param rank this rank
     * @param worldSize the number of ranks
     * @return the listeners to run, in the same order; a new list
     */
    public static List<TrainingListener> select(
            List<TrainingListener> listeners, int rank, int worldSize) {
        List<TrainingListener> selected = new ArrayList<>(listeners.size());
        for (TrainingListener l : listeners) {
            TrainingListener inner = l instanceof RankZeroListener r ? r.delegate : l;
            if (rank == 0 && worldSize > 1 && inner instanceof LoggingTrainingListener) {
                selected.add(new RankZeroListener(inner, worldSize));
            } else if (rank == 0 || !(l instanceof RankZeroListener || printsOrWrites(l))) {
                selected.add(l);
            }
        }
        return selected;
    }

    /**
     * Returns whether a listener is one of DJL's that print or write files, so run on rank 0 only.
     *
     * @param listener a listener
     * @return whether it is one of DJL's logging, model-saving, timing or memory listeners
     */
    public static boolean printsOrWrites(TrainingListener listener) {
        return listener instanceof LoggingTrainingListener
                || listener instanceof SaveModelTrainingListener
                || listener instanceof TimeMeasureTrainingListener
                || listener instanceof MemoryTrainingListener;
    }

    /** {@inheritDoc} */
    @Override
    public void onEpoch(Trainer trainer) {
        delegate.onEpoch(trainer);
    }

    /** {@inheritDoc} */
    @Override
    public void onTrainingBatch(Trainer trainer, BatchData batchData) {
        delegate.onTrainingBatch(trainer, share(batchData));
    }

    /** {@inheritDoc} */
    @Override
    public void onValidationBatch(Trainer trainer, BatchData batchData) {
        delegate.onValidationBatch(trainer, share(batchData));
    }

    /** {@inheritDoc} */
    @Override
    public void onTrainingBegin(Trainer trainer) {
        delegate.onTrainingBegin(trainer);
    }

    /** {@inheritDoc} */
    @Override
    public void onTrainingEnd(Trainer trainer) {
        delegate.onTrainingEnd(trainer);
    }

    private BatchData share(BatchData data) {
        Batch b = data.getBatch();
        if (progressShare == 1 || b == null) {
            return data;
        }
        // A view for the progress bar only: never closed, it owns nothing.
        Batch view =
                new Batch(
                        b.getManager(),
                        b.getData(),
                        b.getLabels(),
                        b.getSize(),
                        null,
                        null,
                        b.getProgress(),
                        (b.getProgressTotal() + progressShare - 1) / progressShare,
                        b.getIndices());
        return new BatchData(view, data.getLabels(), data.getPredictions());
    }
}
