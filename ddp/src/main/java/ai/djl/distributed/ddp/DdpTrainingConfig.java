package ai.djl.distributed.ddp;

import ai.djl.Device;
import ai.djl.nn.Parameter;
import ai.djl.training.Trainer;
import ai.djl.training.TrainingConfig;
import ai.djl.training.dataset.Batch;
import ai.djl.training.evaluator.Evaluator;
import ai.djl.training.initializer.Initializer;
import ai.djl.training.listener.EvaluatorTrainingListener;
import ai.djl.training.listener.LoggingTrainingListener;
import ai.djl.training.listener.MemoryTrainingListener;
import ai.djl.training.listener.SaveModelTrainingListener;
import ai.djl.training.listener.TimeMeasureTrainingListener;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.listener.TrainingListener.BatchData;
import ai.djl.training.listener.TrainingListenerAdapter;
import ai.djl.training.loss.Loss;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.PairList;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.function.Predicate;

/**
 * The user's training configuration as a DDP trainer sees it: one device, evaluators and loss
 * averaged over ranks for reporting, a listener of its own first, and on ranks other than 0 none of
 * DJL's listeners that print or write files.
 */
final class DdpTrainingConfig implements TrainingConfig {

    private final TrainingConfig config;
    private final Device device;
    private final RankAverages averages;
    private final Loss loss;
    private final List<Evaluator> evaluators = new ArrayList<>();
    private final List<TrainingListener> listeners = new ArrayList<>();

    DdpTrainingConfig(
            TrainingConfig config, Device device, RankAverages averages, int rank, int worldSize) {
        this.config = config;
        this.device = device;
        this.averages = averages;
        for (Evaluator e : config.getEvaluators()) {
            evaluators.add(averages.wrap(e));
        }
        this.loss = averages.wrap(config.getLossFunction());
        listeners.add(new EpochAverages());
        for (TrainingListener l : config.getTrainingListeners()) {
            if (rank == 0 && worldSize > 1 && l instanceof LoggingTrainingListener) {
                listeners.add(new RankProgress(l, worldSize));
            } else if (rank == 0 || !printsOrWrites(l)) {
                listeners.add(l);
            }
        }
    }

    /**
     * Returns whether a listener prints or writes files, so runs on rank 0 only.
     *
     * @param listener a listener
     * @return whether it is one of DJL's logging, model-saving, timing or memory listeners
     */
    static boolean printsOrWrites(TrainingListener listener) {
        return listener instanceof LoggingTrainingListener
                || listener instanceof SaveModelTrainingListener
                || listener instanceof TimeMeasureTrainingListener
                || listener instanceof MemoryTrainingListener;
    }

    RankAverages getAverages() {
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
            if (trainer instanceof DistributedDataParallel) {
                ((DistributedDataParallel) trainer).finishPendingUpdates();
            }
            averages.average(
                    trainer.getManager(),
                    EvaluatorTrainingListener.TRAIN_EPOCH,
                    EvaluatorTrainingListener.VALIDATE_EPOCH);
        }
    }

    /**
     * DJL's logging listener with progress bars that reach 100%: DJL sizes them by the whole
     * dataset, while this rank's batches cover its share, about 1/N of it.
     */
    private static final class RankProgress implements TrainingListener {

        private final TrainingListener logging;
        private final int worldSize;

        RankProgress(TrainingListener logging, int worldSize) {
            this.logging = logging;
            this.worldSize = worldSize;
        }

        /** {@inheritDoc} */
        @Override
        public void onEpoch(Trainer trainer) {
            logging.onEpoch(trainer);
        }

        /** {@inheritDoc} */
        @Override
        public void onTrainingBatch(Trainer trainer, BatchData batchData) {
            logging.onTrainingBatch(trainer, share(batchData));
        }

        /** {@inheritDoc} */
        @Override
        public void onValidationBatch(Trainer trainer, BatchData batchData) {
            logging.onValidationBatch(trainer, share(batchData));
        }

        /** {@inheritDoc} */
        @Override
        public void onTrainingBegin(Trainer trainer) {
            logging.onTrainingBegin(trainer);
        }

        /** {@inheritDoc} */
        @Override
        public void onTrainingEnd(Trainer trainer) {
            logging.onTrainingEnd(trainer);
        }

        private BatchData share(BatchData data) {
            Batch b = data.getBatch();
            if (b == null) {
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
                            (b.getProgressTotal() + worldSize - 1) / worldSize,
                            b.getIndices());
            return new BatchData(view, data.getLabels(), data.getPredictions());
        }
    }
}
