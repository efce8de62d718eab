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

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Watches one communicator's pending work, as PyTorch's NCCL watchdog: every interval it completes
 * the works whose end events have completed and reads the communicator's asynchronous error. On an
 * error, or a work past its deadline, it aborts the communicator (its kernels stop, so no rank
 * waits forever) and fails every pending and later work with the reason, naming the collective and
 * NCCL's text. The JVM keeps running.
 *
 * <p>Owns one daemon thread; {@link #close} stops it. Thread-safe.
 */
final class NcclWatchdog implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(NcclWatchdog.class);

    private final NcclCommunicator comm;
    private final long intervalNanos;
    private final ConcurrentLinkedQueue<NcclWork> pending = new ConcurrentLinkedQueue<>();
    private final Thread thread;
    private volatile DistributedException failure;
    private volatile boolean closed;

    /**
     * Starts watching a communicator.
     *
     * @param comm the communicator
     * @param interval how often to look (PyTorch: 100 ms)
     * @param name the thread's name
     * @param threads makes the thread
     */
    NcclWatchdog(NcclCommunicator comm, Duration interval, String name, ThreadFactory threads) {
        this.comm = comm;
        this.intervalNanos = interval.toNanos();
        this.thread = threads.newThread(this::run);
        thread.setName(name);
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Watches a work just issued; if the communicator has already failed, fails it once the abort
     * has stopped its kernels.
     *
     * @param work the work
     */
    void watch(NcclWork work) {
        pending.add(work);
        DistributedException f = failure;
        if (f != null) {
            breakWith(f);
        }
    }

    /**
     * The failure that broke the communicator, if any.
     *
     * @return the failure, or null
     */
    DistributedException failure() {
        return failure;
    }

    /**
     * Breaks the communicator: aborts it, then fails every pending work. The first reason wins.
     * Returns once the communicator is aborted, whoever began the abort.
     *
     * @param reason why
     */
    void breakWith(DistributedException reason) {
        boolean first;
        synchronized (this) {
            first = failure == null;
            if (first) {
                failure = reason;
            }
        }
        if (first) {
            logger.error("aborting the NCCL communicator: {}", reason.getMessage());
        }
        // The abort first: a work failed hands its arrays back to the caller (and its events to
        // the pool), so its kernels must have stopped. Every caller aborts (idempotent, and prompt
        // even while another thread settles a call, see NcclCommunicator.abort): none returns
        // while another's abort is still under way. Meanwhile no poller takes an end event the
        // abort completes for success: the abort is flagged before it runs.
        comm.abort();
        for (NcclWork w; (w = pending.poll()) != null; ) {
            w.fail(failure);
        }
    }

    private void run() {
        boolean current = false;
        while (!closed) {
            try {
                if (!current) {
                    comm.makeCurrent();
                    current = true;
                }
                look();
            } catch (Throwable e) {
                // Nothing may end this thread unnoticed: pending and later works would wait for
                // a watchdog that no longer runs, and a dead peer would hang this rank.
                breakWith(new DistributedException("the NCCL watchdog failed: " + e, e));
                if (e instanceof VirtualMachineError vme) {
                    throw vme;
                }
            }
            LockSupport.parkNanos(this, intervalNanos);
        }
    }

    /** One look: completes finished works, then checks the deadline and the async error. */
    void look() {
        DistributedException broken = failure;
        if (broken != null) {
            breakWith(broken); // fails what was watched meanwhile, once the abort has run
            return;
        }
        if (comm.aborting()) {
            // Aborted by another thread (a split that failed aborts its parent): the pending
            // works were cut short, and the communicator is gone.
            breakWith(
                    new DistributedException(
                            comm + " was aborted; its pending and later collectives fail"));
            return;
        }
        long now = System.nanoTime();
        for (Iterator<NcclWork> it = pending.iterator(); it.hasNext(); ) {
            NcclWork w = it.next();
            if (w.poll()) {
                it.remove();
                DistributedException f = w.failure();
                if (f != null) {
                    // The end event answered a CUDA error (a sticky one, such as an illegal
                    // address, breaks the context), or an abort began meanwhile: the communicator
                    // is not trusted further, as PyTorch's watchdog, which aborts on any exception
                    // from a work's query.
                    breakWith(
                            new DistributedException(
                                    f.getMessage()
                                            + " on "
                                            + comm
                                            + "; the communicator was aborted",
                                    f));
                    return;
                }
            } else if (w.isOverdue(now)) {
                breakWith(
                        new DistributedException(
                                w.description()
                                        + " timed out: not complete within the group's timeout"
                                        + " on "
                                        + comm
                                        + "; the communicator was aborted"));
                return;
            }
        }
        int e = comm.asyncError();
        if (e > 0 && e != NcclResult.IN_PROGRESS.code()) {
            NcclWork first = pending.peek();
            breakWith(
                    new DistributedException(
                            (first != null ? first.description() : "the NCCL communicator")
                                    + " failed: "
                                    + comm.describe(e)
                                    + " on "
                                    + comm
                                    + "; the communicator was aborted"));
        }
    }

    /**
     * After the thread has stopped and the communicator was finalized: completes the works that
     * finished and fails the rest with the reason, without aborting anything. Where finalizing gave
     * way to an abort, every work still pending fails.
     *
     * @param reason why the rest fail
     */
    void closeWith(DistributedException reason) {
        synchronized (this) {
            if (failure == null) {
                failure = reason;
            }
        }
        // A communicator aborted when finalizing ran out of time: the works still pending were
        // cut short, although their end events complete.
        boolean aborted = comm.aborted();
        for (NcclWork w; (w = pending.poll()) != null; ) {
            if (aborted || !w.poll()) {
                w.fail(failure);
            }
        }
    }

    /** Stops the thread, waiting up to a second for it. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(thread);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
