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
package ai.djl.distributed.backend.nccl;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.Waits;

import com.sun.jna.Pointer;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.LockSupport;

/**
 * The {@link Work} of one NCCL collective: complete when the event recorded after it on the
 * backend's stream has completed, as PyTorch's {@code WorkNCCL}.
 *
 * <p>{@link #waitFor} does not block the host by default: it makes the caller's stream (DJL's
 * legacy default stream) wait for the collective, so every later operation on the arrays is ordered
 * after it, and freeing them at once is safe. With the backend's {@code blockingWait} option, and
 * for barriers, it polls the event on the host until it completes or the timeout passes, as
 * PyTorch's {@code TORCH_NCCL_BLOCKING_WAIT}; an interrupt of that wait aborts the communicator, as
 * {@link Work#waitFor} promises. The work keeps references to its arrays until the event has
 * completed, or the communicator has been aborted; the arrays stay the caller's. Thread-safe.
 *
 * <p>Once an abort of the communicator has begun, every work not yet seen to complete fails: the
 * abort makes the kernels exit, so their end events complete on partial results. A work fails once
 * its end event has completed or the abort has returned, not before: its kernels may run until
 * then. A caller's stream that already waits for the end event (a non-blocking {@link #waitFor}
 * that returned) goes on after such an abort, and the arrays may then hold partial results; only
 * {@code blockingWait} guarantees that a collective cut short raises an error.
 */
final class NcclWork implements Work {

    private final String description;
    private final NcclCommunicator comm;
    private final CudaDriver cu;
    private final Duration timeout;
    private final long deadline;
    private final boolean hostWait;
    private final NcclWatchdog watchdog;
    private final CompletableFuture<Void> future = new CompletableFuture<>();
    private Pointer start; // guarded by this; null once released
    private Pointer end; // guarded by this; null once released
    private List<?> keep; // guarded by this

    /**
     * Creates the work of a collective about to be issued, with its two events.
     *
     * @param description the collective, for messages
     * @param comm the communicator it runs on
     * @param keep what must stay referenced until it completes (its arrays)
     * @param timeout how long it may take (the watchdog's deadline)
     * @param hostWait whether {@link #waitFor} blocks the host
     * @param watchdog the communicator's: it aborts the communicator when a host wait is
     *     interrupted, and names why an abort cut the work short
     */
    NcclWork(
            String description,
            NcclCommunicator comm,
            List<?> keep,
            Duration timeout,
            boolean hostWait,
            NcclWatchdog watchdog) {
        this.description = description;
        this.comm = comm;
        this.cu = comm.driver();
        this.keep = keep;
        this.timeout = timeout;
        this.deadline = System.nanoTime() + timeout.toNanos();
        this.hostWait = hostWait;
        this.watchdog = watchdog;
        this.start = comm.events().take();
        try {
            this.end = comm.events().take();
        } catch (RuntimeException e) {
            comm.events().giveBack(start, false);
            throw e;
        }
    }

    synchronized Pointer startEvent() {
        return start;
    }

    synchronized Pointer endEvent() {
        return end;
    }

    String description() {
        return description;
    }

    boolean isOverdue(long now) {
        return now - deadline > 0;
    }

    /**
     * Polls the end event; on completion releases the events and arrays and completes the work. The
     * caller has made the context current. Once the communicator is aborted the work fails instead:
     * NCCL's abort makes the kernels exit, so the end event of a collective cut short completes
     * too, and one seen complete after the abort began is no success.
     *
     * @return whether the work is done (completed or failed)
     */
    synchronized boolean poll() {
        if (future.isDone() || failIfAborted()) {
            return true;
        }
        int r = cu.cuEventQuery(end);
        if (r == CudaResult.NOT_READY.code()) {
            return false;
        }
        if (r == CudaResult.SUCCESS.code()) {
            if (comm.aborting()) {
                // The abort may have begun between the check above and the query, and be what
                // completed the event: the flag is set before ncclCommAbort is called.
                fail(cutShort());
            } else {
                release(true);
                future.complete(null);
            }
        } else {
            fail(
                    new DistributedException(
                            description + ": cuEventQuery -> " + NcclRuntime.describe(cu, r)));
        }
        return true;
    }

    /**
     * Fails the work if the communicator was aborted (the abort has returned: the kernels no longer
     * run) before it was seen to complete.
     */
    private boolean failIfAborted() {
        if (!comm.aborted()) {
            return false;
        }
        fail(cutShort());
        return true;
    }

    /** Why an abort cut the work short: the watchdog's reason, where it aborted. */
    private DistributedException cutShort() {
        DistributedException reason = watchdog.failure();
        return reason != null
                ? reason
                : new DistributedException(
                        description
                                + " did not complete: "
                                + comm
                                + " was aborted while it was pending");
    }

    /**
     * The failure of a work that is done and failed, e.g. by a CUDA error of its end event.
     *
     * @return the failure, or null while pending or once completed
     */
    DistributedException failure() {
        if (!future.isCompletedExceptionally()) {
            return null;
        }
        Throwable e = future.handle((v, t) -> t).join();
        return e instanceof DistributedException de
                ? de
                : new DistributedException(String.valueOf(e.getMessage()), e);
    }

    /**
     * Fails the work, dropping its arrays: only once its kernels no longer run (the communicator
     * was aborted, its end event completed, or the collective was never enqueued).
     *
     * @param failure the reason
     */
    synchronized void fail(DistributedException failure) {
        if (!future.isDone()) {
            release(false);
            future.completeExceptionally(failure);
        }
    }

    /** Drops the arrays; the events go back for reuse once both have completed, else away. */
    private void release(boolean completed) {
        if (start != null) {
            comm.events().giveBack(start, completed);
            comm.events().giveBack(end, completed);
            start = null;
            end = null;
        }
        keep = null;
    }

    /** {@inheritDoc} */
    @Override
    public boolean isCompleted() {
        if (!future.isDone()) {
            comm.makeCurrent();
            poll();
        }
        return future.isDone();
    }

    /** {@inheritDoc} */
    @Override
    public boolean isSuccess() {
        return isCompleted() && !future.isCompletedExceptionally();
    }

    /** {@inheritDoc} */
    @Override
    public Throwable getException() {
        if (!isCompleted() || !future.isCompletedExceptionally()) {
            return null;
        }
        return future.handle((v, e) -> e).join();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Without {@code blockingWait} (and for all but barriers) this returns at once, having made
     * the caller's stream wait for the collective; the timeout is then the watchdog's. Should the
     * communicator be aborted after that (a peer's failure, the timeout), the aborted kernels exit,
     * the caller's stream goes on and the arrays may hold partial results: the failure then shows
     * only in {@link #isSuccess} and {@link #getException}. With {@code blockingWait} this throws
     * instead, and an interrupt aborts the communicator: the wait goes on until the work has let go
     * of its arrays, then throws with the interrupt flag set.
     *
     * @throws IllegalArgumentException if the timeout is null or negative
     */
    @Override
    public void waitFor(Duration timeout) {
        if (timeout == null || timeout.isNegative()) {
            throw new IllegalArgumentException(
                    "timeout: " + timeout + " (expected: a duration >= 0)");
        }
        if (!hostWait) {
            orderCallersStream();
        } else if (!future.isDone()) { // a work already done needs no context
            waitOnHost(timeout);
        }
        throwIfFailed();
    }

    /** Polls the end event until the work is done, the timeout passes or an interrupt aborts it. */
    private void waitOnHost(Duration timeout) {
        long until = System.nanoTime() + Waits.capped(timeout).toNanos();
        comm.makeCurrent();
        int polls = 0;
        while (!poll()) {
            if (Thread.currentThread().isInterrupted()) {
                throw abortOnInterrupt(until);
            }
            if (System.nanoTime() - until > 0) {
                throw new DistributedException(
                        description
                                + " did not complete within "
                                + timeout
                                + " (it keeps running)");
            }
            polls = backOff(polls);
        }
    }

    /**
     * As {@link Work#waitFor} promises an interrupted waiter: aborts the communicator (failing the
     * group), waits, through interrupts and up to the wait's deadline, until the work has let go of
     * its arrays, and returns the failure to throw, the interrupt flag set again.
     */
    private DistributedException abortOnInterrupt(long until) {
        DistributedException failure =
                new DistributedException(
                        "interrupted while waiting for " + description + ", which was aborted");
        try {
            watchdog.breakWith(
                    new DistributedException(
                            description + " was aborted: a thread waiting for it was interrupted"));
        } catch (RuntimeException e) {
            failure.addSuppressed(e);
        }
        try {
            int polls = 0;
            while (!poll()) {
                if (System.nanoTime() - until > 0) {
                    failure.addSuppressed(
                            new DistributedException(
                                    description + " still runs after the abort; its arrays too"));
                    break;
                }
                // cleared on every turn, a second interrupt too: parking returns at once while set
                Thread.interrupted();
                polls = backOff(polls);
            }
        } finally {
            Thread.currentThread().interrupt();
        }
        return failure;
    }

    /** Spins for the first polls (a collective of microseconds), then parks ever longer. */
    private static int backOff(int polls) {
        if (polls > 1000) {
            LockSupport.parkNanos(polls > 100_000 ? 1_000_000 : 10_000);
        }
        return Math.min(polls + 1, 1_000_000);
    }

    /** {@inheritDoc} */
    @Override
    public void waitFor() {
        waitFor(timeout);
    }

    /**
     * {@inheritDoc}
     *
     * <p>As PyTorch's CUDA-aware futures: without {@code blockingWait}, the future returned is
     * complete once the caller's stream waits for the collective, that is at once, unless the work
     * has already failed; what is chained to it runs DJL operations that the stream orders after
     * the collective. With {@code blockingWait} it completes when the collective has run. Whether
     * the GPU has finished it, {@link #isCompleted} tells.
     */
    @Override
    public CompletableFuture<Void> getFuture() {
        if (hostWait || !orderCallersStream()) {
            return future;
        }
        return CompletableFuture.completedFuture(null);
    }

    /**
     * Makes the caller's stream wait for the collective, unless it is over.
     *
     * @return whether it was still pending (the caller's stream now waits for it)
     */
    private synchronized boolean orderCallersStream() {
        if (future.isDone() || failIfAborted()) {
            return false;
        }
        comm.makeCurrent();
        int r = cu.cuStreamWaitEvent(NcclCommunicator.LEGACY_STREAM, end, 0);
        if (r != CudaResult.SUCCESS.code()) {
            throw new DistributedException(
                    description + ": cuStreamWaitEvent -> " + NcclRuntime.describe(cu, r));
        }
        return true;
    }

    private void throwIfFailed() {
        if (future.isCompletedExceptionally()) {
            Throwable e = future.handle((v, t) -> t).join();
            throw new DistributedException(e.getMessage(), e);
        }
    }

    @Override
    public synchronized String toString() {
        if (!future.isDone()) {
            return description + " (pending, holding " + keep.size() + " arrays)";
        }
        return description + (future.isCompletedExceptionally() ? " (failed)" : " (done)");
    }
}
