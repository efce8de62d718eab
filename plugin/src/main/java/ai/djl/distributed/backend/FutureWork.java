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
package ai.djl.distributed.backend;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.Work;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A {@link Work} backed by a {@link CompletableFuture}, for backends to return. Thread-safe.
 *
 * <p>A wait that is interrupted does not return while the operation may still read or write the
 * caller's arrays: it aborts the operation (the backend's abort fails its group, as any failed
 * collective does), waits until the operation has ended, within the same bound, and only then
 * throws, with the thread's interrupt flag set. Returning at once would let the caller free arrays
 * the backend still writes.
 */
public final class FutureWork implements Work {

    private final String description;
    private final CompletableFuture<Void> future;
    private final Duration defaultTimeout;
    private final Runnable abort;

    /**
     * Creates a work that cannot be aborted: an interrupted wait waits on for the operation to end.
     *
     * @param description the operation, for messages (e.g. "ALL_REDUCE #7 on group 0")
     * @param future completed when the operation completes
     * @param defaultTimeout the bound of {@link #waitFor()}: the operation's own timeout plus slack
     */
    public FutureWork(String description, CompletableFuture<Void> future, Duration defaultTimeout) {
        this(description, future, defaultTimeout, () -> {});
    }

    /**
     * Creates the work.
     *
     * @param description the operation, for messages (e.g. "ALL_REDUCE #7 on group 0")
     * @param future completed when the operation completes
     * @param defaultTimeout the bound of {@link #waitFor()}: the operation's own timeout plus slack
     * @param abort ends the operation soon, its future completing exceptionally; run when a waiter
     *     is interrupted
     */
    public FutureWork(
            String description,
            CompletableFuture<Void> future,
            Duration defaultTimeout,
            Runnable abort) {
        this.description = description;
        this.future = future;
        this.defaultTimeout = defaultTimeout;
        this.abort = abort;
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
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException(
                    "timeout: " + timeout + " (expected: a duration >= 0)");
        }
        long nanos = Waits.capped(timeout).toNanos();
        long deadline = System.nanoTime() + nanos;
        try {
            future.get(nanos, TimeUnit.NANOSECONDS);
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
            DistributedException failure =
                    new DistributedException(
                            "interrupted while waiting for " + description + ", which was aborted",
                            e);
            try {
                abort.run();
            } catch (RuntimeException abortFailure) {
                failure.addSuppressed(abortFailure);
            }
            // The caller's arrays are not free until the operation has ended.
            if (!Waits.awaitUninterruptibly(future, deadline)) {
                failure.addSuppressed(
                        new DistributedException(
                                description
                                        + " still runs after "
                                        + timeout
                                        + " despite the abort"));
            }
            Thread.currentThread().interrupt();
            throw failure;
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
        if (e instanceof ai.djl.distributed.CommunicationException ce) {
            return new ai.djl.distributed.CommunicationException(
                    ce.getMessage(), ce.getPeerRank(), ce);
        }
        return new DistributedException(e.getMessage(), e);
    }
}
