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
package ai.djl.distributed.backend.cpu;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.CallerWaits;
import ai.djl.distributed.backend.FutureWork;
import ai.djl.distributed.backend.cpu.algorithm.CollectiveContext;
import ai.djl.distributed.backend.cpu.algorithm.ScratchSpace;
import ai.djl.distributed.backend.cpu.reduce.TorchReductions;
import ai.djl.distributed.backend.cpu.transport.Deadline;
import ai.djl.distributed.backend.cpu.transport.OpSignature;
import ai.djl.distributed.backend.cpu.transport.Transport;
import ai.djl.ndarray.types.DataType;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * Runs a group's collectives one at a time, in the order they were issued, on one thread. Each gets
 * the next sequence number at issue, which tags its messages, and a deadline of the group's timeout
 * from when it starts. A failed collective aborts the transport, so that every later one, here and
 * on the peers, fails at once rather than at its own timeout.
 */
final class CollectiveRunner implements AutoCloseable {

    /** How much longer than the timeout {@link Work#waitFor()} waits for a failure to show. */
    static final Duration WAIT_SLACK = Duration.ofSeconds(5);

    private final Transport transport;
    private final Duration timeout;
    private final ExecutorService executor;
    private final ScratchSpace scratch = new ScratchSpace();
    private final TorchReductions kernels;
    private long nextSeq;
    private int queued; // handed to the executor and not yet running
    private final ReentrantLock executing = new ReentrantLock(); // held by the running collective
    private boolean closed;

    CollectiveRunner(Transport transport, Duration timeout, TorchReductions kernels) {
        this.transport = transport;
        this.kernels = kernels;
        this.timeout = timeout;
        String name = "djl-dist-cpu-r" + transport.getRank();
        this.executor =
                Executors.newSingleThreadExecutor(
                        r -> {
                            Thread t = new Thread(r, name);
                            t.setDaemon(true);
                            return t;
                        });
    }

    /**
     * Queues a collective.
     *
     * @param sig its signature
     * @param type its element type
     * @param op its reduction, or null
     * @param body the algorithm
     * @return the work
     */
    Work submit(OpSignature sig, DataType type, ReduceOp op, Consumer<CollectiveContext> body) {
        ReduceOp.Type elementOp = null;
        if (op != null) {
            elementOp =
                    op.getType() == ReduceOp.Type.AVG || op.getType() == ReduceOp.Type.PREMUL_SUM
                            ? ReduceOp.Type.SUM
                            : op.getType();
        }
        ReduceOp.Type reduce = elementOp;
        // The timeout counts from submission, queueing included (as PyTorch's NCCL work counts
        // from enqueueing): so a caller's bounded wait always outlasts the collective, which can
        // never still be writing the caller's arrays after that wait gives up.
        Deadline deadline = Deadline.after(timeout);
        CompletableFuture<Void> future = new CompletableFuture<>();
        long seq;
        String what;
        boolean inline;
        synchronized (this) {
            if (closed) {
                throw new IllegalStateException("the process group has been destroyed");
            }
            seq = nextSeq++;
            what = sig + " #" + seq + " on rank " + transport.getRank();
            // A caller that will wait anyway runs the collective itself when nothing is queued
            // or running: the lock, taken here, keeps later collectives behind it.
            inline = CallerWaits.isSet() && queued == 0 && executing.tryLock();
            if (!inline) {
                queued++;
                try {
                    executor.execute(
                            () -> {
                                executing.lock();
                                try {
                                    synchronized (this) {
                                        queued--;
                                    }
                                    run(seq, sig, type, reduce, body, deadline, future, what);
                                } finally {
                                    executing.unlock();
                                }
                            });
                } catch (RejectedExecutionException e) {
                    queued--;
                    throw new IllegalStateException("the process group has been destroyed", e);
                }
            }
        }
        if (inline) {
            try {
                run(seq, sig, type, reduce, body, deadline, future, what);
            } finally {
                executing.unlock();
            }
        }
        return new FutureWork(
                what, future, timeout.plus(WAIT_SLACK), abortOnInterrupt(transport, what));
    }

    private void run(
            long seq,
            OpSignature sig,
            DataType type,
            ReduceOp.Type reduce,
            Consumer<CollectiveContext> body,
            Deadline deadline,
            CompletableFuture<Void> future,
            String what) {
        CommunicationException failed = transport.getFailure();
        if (failed != null) {
            future.completeExceptionally(
                    new CommunicationException(
                            what + " cannot run: " + failed.getMessage(),
                            failed.getPeerRank(),
                            failed));
            return;
        }
        try {
            transport.beginCollective(seq, sig);
            body.accept(
                    new CollectiveContext(
                            transport, seq, sig, deadline, type, reduce, scratch, kernels));
            future.complete(null);
        } catch (CommunicationException e) {
            transport.abort(e);
            future.completeExceptionally(e);
        } catch (RuntimeException | Error e) {
            CommunicationException ce = new CommunicationException(what + " failed: " + e, -1, e);
            transport.abort(ce);
            future.completeExceptionally(ce);
        }
    }

    /**
     * Returns the abort of a {@link FutureWork} on this transport: it fails the group on behalf of
     * a caller interrupted while waiting for {@code what}.
     */
    static Runnable abortOnInterrupt(Transport transport, String what) {
        return () ->
                transport.abort(
                        new CommunicationException(
                                what + " was aborted: a thread waiting for it was interrupted",
                                -1));
    }

    /**
     * Stops taking collectives and waits, bounded by the timeout, until those queued or running (on
     * the executor, or inline on a caller's thread) have ended: they write into the callers' arrays
     * and this backend's memory, which are freed once this returns. An interrupt does not end the
     * wait: it aborts the group, so that they end at once (failing), and the interrupt status is
     * restored on return.
     */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
        }
        executor.shutdown();
        long end = System.nanoTime() + timeout.toNanos() + TimeUnit.SECONDS.toNanos(1);
        if (!awaitAbortingOnInterrupt(
                nanos -> executor.awaitTermination(nanos, TimeUnit.NANOSECONDS), end)) {
            executor.shutdownNow();
        }
        // A collective run inline holds the lock on its caller's thread.
        awaitAbortingOnInterrupt(
                nanos -> {
                    if (executing.tryLock(nanos, TimeUnit.NANOSECONDS)) {
                        executing.unlock();
                    }
                    return true;
                },
                end);
        scratch.release();
    }

    /** A wait of at most the given nanoseconds; whether what it waits for happened. */
    private interface TimedWait {
        boolean await(long nanos) throws InterruptedException;
    }

    /**
     * Runs {@code wait} until it returns or {@code end}, through interrupts: each (one pending on
     * entry included) aborts the group if collectives are queued or running, so that they end now.
     * The interrupt status is restored on return.
     */
    private boolean awaitAbortingOnInterrupt(TimedWait wait, long end) {
        boolean interrupted = Thread.interrupted();
        if (interrupted) {
            abortIfBusy();
        }
        try {
            while (true) {
                try {
                    return wait.await(Math.max(0, end - System.nanoTime()));
                } catch (InterruptedException e) {
                    interrupted = true;
                    abortIfBusy();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Fails the group when a collective is queued or running, so that it ends now. */
    private void abortIfBusy() {
        boolean busy;
        synchronized (this) {
            busy = queued > 0;
        }
        if (busy || executing.isLocked()) {
            transport.abort(
                    new CommunicationException(
                            "rank "
                                    + transport.getRank()
                                    + "'s group was destroyed by an interrupted thread while"
                                    + " collectives ran",
                            -1));
        }
    }
}
