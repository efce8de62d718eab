package ai.djl.distributed.ddp;

/**
 * A scope in which {@link DistributedDataParallel#step()} does not synchronize gradients, as
 * PyTorch's {@code no_sync()}: steps inside update each rank's parameters from its own gradients,
 * with no communication. Obtained from {@link DistributedDataParallel#noSync()}; scopes nest, and
 * synchronization resumes when the outermost closes.
 *
 * <p>For gradient accumulation DJL needs no such scope: gradients add up over {@code backward}
 * calls until {@code step()}, and DDP reduces them there, once. Call {@code step()} every k
 * micro-batches.
 */
public final class NoSync implements AutoCloseable {

    private final Runnable release;
    private boolean closed;

    NoSync(Runnable release) {
        this.release = release;
    }

    /** Ends the scope. Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            release.run();
        }
    }
}
