package ai.djl.distributed.ddp;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.evaluator.Evaluator;

/** An evaluator reporting its average over the ranks after {@link RankAverages#average}. */
final class RankAveragedEvaluator extends Evaluator {

    private final RankAverages.Tally tally;

    RankAveragedEvaluator(RankAverages.Tally tally) {
        super(tally.delegate.getName());
        this.tally = tally;
    }

    /** {@inheritDoc} */
    @Override
    public NDArray evaluate(NDList labels, NDList predictions) {
        return tally.delegate.evaluate(labels, predictions);
    }

    /** {@inheritDoc} */
    @Override
    public void addAccumulator(String key) {
        tally.delegate.addAccumulator(key);
        tally.added(key);
    }

    /** {@inheritDoc} */
    @Override
    public void updateAccumulators(String[] keys, NDList labels, NDList predictions) {
        tally.delegate.updateAccumulators(keys, labels, predictions);
        tally.updated(keys, labels);
    }

    /** {@inheritDoc} */
    @Override
    public void updateAccumulator(String key, NDList labels, NDList predictions) {
        tally.delegate.updateAccumulator(key, labels, predictions);
        tally.updated(new String[] {key}, labels);
    }

    /** {@inheritDoc} */
    @Override
    public void resetAccumulator(String key) {
        tally.delegate.resetAccumulator(key);
        tally.added(key);
    }

    /** {@inheritDoc} */
    @Override
    public float getAccumulator(String key) {
        return tally.get(key);
    }
}
