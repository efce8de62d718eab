package ai.djl.distributed.pg;

import ai.djl.distributed.DistributedException;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/** A {@link Work} backed by a {@link CompletableFuture}, for backends to return. Thread-safe. */
public final class FutureWork implements Work {

    private final String description;
    private final CompletableFuture<Void> future;
    private final Duration defaultTimeout;

    /**
     * Creates the work.
     *
     * @param description the operation, for messages (e.g. "ALL_REDUCE #7 on group 0")
     * @param future completed when the operation completes
     * @param defaultTimeout the bound of {@link #waitFor()}: the operation's own timeout plus slack
     */
    public FutureWork(String description, CompletableFuture<Void> future, Duration defaultTimeout) {
        this.description = description;
        this.future = future;
        this.defaultTimeout = defaultTimeout;
    }

    /**
     * Returns a work that has already succeeded.
     *
     * @param description the operation
     * @return the work
     */
    public static FutureWork completed(String description) {
        return new FutureWork(description, CompletableFuture.completedFuture(null), Duration.ZERO);
    }

    /** {@inheritDoc} */
    @Override
    public boolean isCompleted() {
        return future.isDone();
    }

    /** {@inheritDoc} */
    @Override
    public boolean isSuccess() {
        return future.isDone() && !future.isCompletedExceptionally();
    }

    /** {@inheritDoc} */
    @Override
    public Throwable getException() {
        if (!future.isCompletedExceptionally()) {
            return null;
        }
        try {
            future.join();
            return null;
        } catch (RuntimeException e) {
            return e.getCause() != null ? e.getCause() : e;
        }
    }

    /** {@inheritDoc} */
    @Override
    public void waitFor(Duration timeout) {
        try {
            future.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof DistributedException de) {
                // Rethrow with this thread's stack, keeping the backend's as the cause.
                throw rethrown(de);
            }
            if (cause instanceof RuntimeException re) {
                throw re;
            }
            throw new DistributedException(description + " failed: " + cause, cause);
        } catch (TimeoutException e) {
            throw new DistributedException(
                    description + " did not complete within " + timeout + " (it keeps running)", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DistributedException("interrupted while waiting for " + description, e);
        }
    }

    /** {@inheritDoc} */
    @Override
    public void waitFor() {
        waitFor(defaultTimeout);
    }

    /** {@inheritDoc} */
    @Override
    public CompletableFuture<Void> getFuture() {
        return future;
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return description + (isCompleted() ? (isSuccess() ? " (done)" : " (failed)") : "");
    }

    private static DistributedException rethrown(DistributedException e) {
        if (e instanceof ai.djl.distributed.backend.CommunicationException ce) {
            return new ai.djl.distributed.backend.CommunicationException(
                    ce.getMessage(), ce.getPeerRank(), ce);
        }
        return new DistributedException(e.getMessage(), e);
    }
}
