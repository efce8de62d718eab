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

import ai.djl.Device;
import ai.djl.nn.Parameter;
import ai.djl.training.Trainer;
import ai.djl.training.TrainingConfig;
import ai.djl.training.evaluator.Evaluator;
import ai.djl.training.initializer.Initializer;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.listener.TrainingListenerAdapter;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.PairList;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * The user's training configuration as a data-parallel trainer (DDP, FSDP) sees it: one device,
 * evaluators and loss averaged over ranks for reporting, a listener of its own first, and on ranks
 * other than 0 none of DJL's listeners that print or write files nor the user's {@link
 * RankZeroListener}s. Immutable once built; the averages are collectives run at each epoch's end on
 * the training thread.
 */
public final class DataParallelConfig implements TrainingConfig {

    private final TrainingConfig config;
    private final Device device;
    private final RankAverages averages;
    private final Loss loss;
    private final List<Evaluator> evaluators = new ArrayList<>();
    private final List<TrainingListener> listeners = new ArrayList<>();
    private final Consumer<Trainer> beforeEpochAverages;

    /**
     * Wraps a user's configuration.
     *
     * @param config the user's configuration; read, not changed
     * @param device the one device this rank trains on
     * @param averages averages evaluators and loss over the ranks
     * @param rank this rank
     * @param worldSize the number of ranks
     * @param beforeEpochAverages runs at each epoch's end before the averages (a trainer finishing
     *     deferred updates, say)
     */
    public DataParallelConfig(
            TrainingConfig config,
            Device device,
            RankAverages averages,
            int rank,
            int worldSize,
            Consumer<Trainer> beforeEpochAverages) {
        this.beforeEpochAverages = beforeEpochAverages;
        this.config = config;
        this.device = device;
        this.averages = averages;
        for (Evaluator e : config.getEvaluators()) {
            evaluators.add(averages.wrap(e));
        }
        this.loss = averages.wrap(config.getLossFunction());
        listeners.add(new EpochAverages());
        listeners.addAll(RankZeroListener.select(config.getTrainingListeners(), rank, worldSize));
    }

    /**
     * Returns the averages over ranks the evaluators and loss report through.
     *
     * @return the averages
     */
    public RankAverages getAverages() {
        return averages;
    }

    /** {@inheritDoc} */
    @Override
    public Device[] getDevices() {
        return new Device[] {device};
    }

    /** {@inheritDoc} */
    @Override
    public PairList<Initializer, Predicate<Parameter>> getInitializers() {
        return config.getInitializers();
    }

    /** {@inheritDoc} */
    @Override
    public Optimizer getOptimizer() {
        return config.getOptimizer();
    }

    /** {@inheritDoc} */
    @Override
    public Loss getLossFunction() {
        return loss;
    }

    /** {@inheritDoc} */
    @Override
    public ExecutorService getExecutorService() {
        return config.getExecutorService();
    }

    /** {@inheritDoc} */
    @Override
    public List<Evaluator> getEvaluators() {
        return evaluators;
    }

    /** {@inheritDoc} */
    @Override
    public List<TrainingListener> getTrainingListeners() {
        return listeners;
    }

    /**
     * Averages the epoch's evaluations over the ranks before any other listener reads (and DJL's
     * {@link EvaluatorTrainingListener} resets) them.
     */
    private final class EpochAverages extends TrainingListenerAdapter {

        /** {@inheritDoc} */
        @Override
        public void onEpoch(Trainer trainer) {
            beforeEpochAverages.accept(trainer);
            averages.average(
                    trainer.getManager(),
                    EvaluatorTrainingListener.TRAIN_EPOCH,
                    EvaluatorTrainingListener.VALIDATE_EPOCH);
        }
    }
}
