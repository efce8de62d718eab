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
package ai.djl.distributed.launch;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * The worker processes of this node for one attempt: started together, watched, stopped together.
 *
 * <p>Each worker has three daemon threads: two copying its stdout and stderr through an {@link
 * OutputPrefixer}, and one waiting for it to end, which reports a {@link WorkerExit} once the
 * worker's output is drained (so a stack trace is printed before the launcher's own message).
 * {@link #stop} sends SIGTERM to every worker and its descendants, waits the grace period, then
 * sends SIGKILL; it is synchronised and idempotent, so a shutdown hook and the monitoring thread
 * may both call it. {@link #close()} stops the workers with the grace period given at start.
 */
final class LocalWorkers implements AutoCloseable {

    // how long an exit waits for the worker's output to drain (a grandchild may hold the pipe)
    private static final long DRAIN_NANOS = TimeUnit.SECONDS.toNanos(2);
    private static final Duration KILL_WAIT = Duration.ofSeconds(10);

    private final List<Worker> workers = new ArrayList<>();
    private final BlockingQueue<WorkerExit> exits = new LinkedBlockingQueue<>();
    private final Duration grace;
    private int reported;
    private volatile boolean stopping;

    private LocalWorkers(Duration grace) {
        this.grace = grace;
    }

    /**
     * Starts this node's workers; if one cannot be started, those already started are stopped.
     *
     * @param setup their commands, environments and prefixes
     * @param restartCount TORCHELASTIC_RESTART_COUNT of this attempt
     * @param out where the workers' stdout lines go
     * @param err where the workers' stderr lines go
     * @param grace the grace between SIGTERM and SIGKILL of {@link #close()}
     * @return the running workers
     * @throws IOException if a process cannot be started
     */
    static LocalWorkers start(
            WorkerSetup setup, int restartCount, PrintStream out, PrintStream err, Duration grace)
            throws IOException {
        LocalWorkers group = new LocalWorkers(grace);
        try {
            for (int local = 0; local < setup.node().localWorldSize(); ++local) {
                group.workers.add(Worker.start(setup, local, restartCount, out, err, group.exits));
            }
        } catch (IOException | RuntimeException e) {
            group.stop(Duration.ofSeconds(5));
            throw e;
        }
        return group;
    }

    /**
     * Waits for the next worker to end.
     *
     * @param timeout the longest wait
     * @return how it ended, or empty if none ended in time
     * @throws InterruptedException if interrupted while waiting
     */
    Optional<WorkerExit> nextExit(Duration timeout) throws InterruptedException {
        WorkerExit e = exits.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
        if (e != null) {
            ++reported;
        }
        return Optional.ofNullable(e);
    }

    /**
     * Returns how many workers have not been reported by {@link #nextExit} yet. Call from the
     * thread that calls {@code nextExit}.
     *
     * @return the number of workers still running (or ended but not reported)
     */
    int unreported() {
        return workers.size() - reported;
    }

    /**
     * Returns whether {@link #stop} was called.
     *
     * @return {@code true} once stopping began
     */
    boolean isStopping() {
        return stopping;
    }

    /**
     * Returns the workers' process ids, by local rank.
     *
     * @return the pids
     */
    List<Long> pids() {
        List<Long> pids = new ArrayList<>();
        for (Worker w : workers) {
            pids.add(w.process.pid());
        }
        return pids;
    }

    /**
     * Stops every worker still running, with its descendants: SIGTERM, then SIGKILL to whatever is
     * left after the grace period. Blocks for at most the grace period plus 10 seconds, then waits
     * (2 s at most in all) for their output to drain.
     *
     * @param grace how long the workers may take to exit after SIGTERM
     */
    synchronized void stop(Duration grace) {
        stopping = true;
        ChildProcesses.stop(this::live, grace, KILL_WAIT);
        long drained = System.nanoTime() + DRAIN_NANOS;
        for (Worker w : workers) {
            w.awaitDrained(drained);
        }
    }

    // Every live worker with its descendants and the rest of its process group: the children of
    // a worker that has exited are found only through the group.
    private List<ProcessHandle> live() {
        List<ProcessHandle> all = new ArrayList<>();
        for (Worker w : workers) {
            // descendants first: once a worker is gone its children are no longer found
            w.process.descendants().forEach(all::add);
            all.add(w.process.toHandle());
            all.addAll(ProcessGroups.members(w.process.toHandle()));
        }
        all.removeIf(h -> !ProcessGroups.running(h));
        return all.stream().distinct().collect(Collectors.toList());
    }

    /**
     * Returns the longest {@link #stop} blocks with this grace period: what a node spends stopping
     * its workers, beating no heartbeat meanwhile.
     *
     * @param grace the grace period
     * @return the bound
     */
    static Duration stopBound(Duration grace) {
        return grace.plus(KILL_WAIT).plusNanos(DRAIN_NANOS);
    }

    /** Stops the workers with the grace period given at start; idempotent. */
    @Override
    public void close() {
        stop(grace);
    }

    /** One worker process and its threads. */
    private static final class Worker {

        final Process process;
        final Thread stdout;
        final Thread stderr;

        private Worker(Process process, Thread stdout, Thread stderr) {
            this.process = process;
            this.stdout = stdout;
            this.stderr = stderr;
        }

        static Worker start(
                WorkerSetup setup,
                int local,
                int restartCount,
                PrintStream out,
                PrintStream err,
                BlockingQueue<WorkerExit> exits)
                throws IOException {
            ProcessBuilder pb = new ProcessBuilder(ProcessGroups.command(setup.command()));
            pb.environment().putAll(setup.environment(local, restartCount));
            pb.redirectInput(ProcessBuilder.Redirect.INHERIT);
            Process p = pb.start();
            int rank = setup.node().rank(local);
            String prefix = setup.linePrefix(local);
            Thread o = daemon(new OutputPrefixer(p.getInputStream(), out, prefix), rank, "out");
            Thread e = daemon(new OutputPrefixer(p.getErrorStream(), err, prefix), rank, "err");
            Worker w = new Worker(p, o, e);
            int group = setup.node().groupRank();
            daemon(() -> w.report(local, rank, group, exits), rank, "watch");
            return w;
        }

        private void report(int local, int rank, int group, BlockingQueue<WorkerExit> exits) {
            try {
                // bounded by the worker's life, which stop() bounds
                int code = process.waitFor();
                Instant when = Instant.now();
                awaitDrained(System.nanoTime() + DRAIN_NANOS);
                exits.add(new WorkerExit(rank, local, group, process.pid(), code, when));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        // Waits until both output threads have copied everything, or the deadline.
        void awaitDrained(long deadlineNanos) {
            try {
                for (Thread t : List.of(stdout, stderr)) {
                    long left = deadlineNanos - System.nanoTime();
                    if (left > 0) {
                        t.join(Math.max(1, left / 1_000_000));
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private static Thread daemon(Runnable body, int rank, String what) {
            Thread t = new Thread(body, "djlrun-rank" + rank + "-" + what);
            t.setDaemon(true);
            t.start();
            return t;
        }
    }
}
