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
