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

import ai.djl.distributed.launch.RestartRounds.Event;
import ai.djl.distributed.launch.RestartRounds.Kind;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.tcp.TcpStore;

import java.io.IOException;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashSet;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * This node's agent: meets the other nodes, then runs rounds of workers until they succeed, fail
 * with no restart left, or the launcher is told to stop. {@link #run()} runs on the main thread;
 * {@link #shutdown()} may be called from a shutdown hook at any time, after which no worker starts
 * and the running ones are stopped.
 */
final class NodeAgent implements AutoCloseable {

    private static final Duration HOOK_STORE_TIMEOUT = Duration.ofSeconds(5);
    // What telling the other nodes may take: connecting (HOOK_STORE_TIMEOUT), the posts, and the
    // serving node's wait for the others to leave (10 s).
    private static final Duration HOOK_TELL_BOUND = Duration.ofSeconds(20);

    private final LaunchOptions options;
    private final Function<NodeAssignment, WorkerSetup> setups;
    private final PrintStream out;
    private final PrintStream err;
    private final Object lock = new Object();
    private LocalWorkers current; // guarded by lock
    private boolean shuttingDown; // guarded by lock
    private boolean finished; // guarded by lock
    // Counted down when the shutdown hook has stopped the workers and told the other nodes.
    private final CountDownLatch hookDone = new CountDownLatch(1);
    private volatile NodeRendezvous rdzv;
    private Heartbeats heartbeats;
    private final Set<Integer> deadNodes = new HashSet<>();
    private volatile int round;
    private volatile int groupRank = -1;

    /**
     * Creates the agent.
     *
     * @param options the launch options
     * @param setups makes the workers' setup once the node's assignment is known
     * @param out where the workers' stdout goes
     * @param err where the workers' stderr and the launcher's messages go
     */
    NodeAgent(
            LaunchOptions options,
            Function<NodeAssignment, WorkerSetup> setups,
            PrintStream out,
            PrintStream err) {
        this.options = options;
        this.setups = setups;
        this.out = out;
        this.err = err;
    }

    /**
     * Runs the job on this node; blocks until it ends.
     *
     * @return the exit status: 0 if every worker of every node succeeded, 1 if one failed
     * @throws LaunchException if the nodes cannot meet or the agent store is lost
     * @throws IOException if a worker cannot be started
     * @throws InterruptedException if interrupted
     */
    int run() throws IOException, InterruptedException {
        rdzv = NodeRendezvous.open(options);
        NodeAssignment node = rdzv.assign();
        groupRank = node.groupRank();
        try {
            return runRounds(node);
        } catch (IOException | RuntimeException e) {
            if (options.nnodes() > 1 && !(e.getCause() instanceof StoreException)) {
                // e.g. a worker that cannot start: the other nodes must not wait for this one
                tellOtherNodes(rdzv, "node " + groupRank + " gave up: " + e.getMessage(), true);
            }
            throw e;
        }
    }

    private int runRounds(NodeAssignment node) throws IOException, InterruptedException {
        heartbeats =
                new Heartbeats(
                        rdzv.store(), groupRank, options.nnodes(), options.heartbeatTimeout());
        WorkerSetup setup = setups.apply(node);
        RestartRounds rounds = new RestartRounds(rdzv, options.nnodes());
        while (true) {
            // A node that died meanwhile never comes: its silence ends the wait.
            Optional<Event> abort =
                    round > 0
                            ? rounds.begin(
                                    round,
                                    () -> silentNode(LocalWorkers.stopBound(options.termTimeout())))
                            : Optional.empty();
            if (abort.isPresent()) {
                log("job failed: " + abort.get().message());
                rdzv.leave(groupRank, deadNodes);
                return 1;
            }
            log(
                    "starting "
                            + node.describe()
                            + ", attempt "
                            + round
                            + ", store "
                            + rdzv.endpoint());
            Event end = runRound(setup, rounds);
            if (end == null) {
                return 1; // stopped by a signal: the shutdown hook sets the exit status
            }
            if (end.kind() != Kind.RESTART) {
                if (end.kind() == Kind.FAILURE) {
                    // A worker's failure at the limit, or one no restart mends (a dead node, a
                    // stopped launcher): restarts are left only in the latter case.
                    log(
                            "job failed: "
                                    + end.message()
                                    + (round < options.maxRestarts()
                                            ? ""
                                            : "; no restarts left " + restarts()));
                }
                rdzv.leave(groupRank, deadNodes);
                return end.kind() == Kind.SUCCESS ? 0 : 1;
            }
            ++round;
            log(
                    end.message()
                            + "; restarting all workers: restart "
                            + round
                            + " of "
                            + options.maxRestarts());
        }
    }

    /**
     * Stops the workers for good: called by the shutdown hook on SIGTERM or SIGINT (or any exit).
     * Does nothing once {@link #run()} has returned. Blocks up to {@code --term-timeout} plus a few
     * seconds; with several nodes, tells the others so that they stop too (about 15 s at most).
     */
    void shutdown() {
        LocalWorkers workers;
        synchronized (lock) {
            if (finished || shuttingDown) {
                return;
            }
            shuttingDown = true;
            workers = current;
        }
        try {
            NodeRendezvous r = rdzv;
            int rank = groupRank;
            if (r != null && options.nnodes() > 1) {
                // First: stopping the workers takes up to --term-timeout, during which this node
                // does not beat, and the others would blame its silence rather than the signal.
                // Before the nodes have met (no rank yet), round 0's event ends their start
                // barrier, which would otherwise wait out --rdzv-timeout for this node.
                tellOtherNodes(
                        r,
                        rank >= 0
                                ? "the launcher of node " + rank + " was stopped"
                                : "a launcher (pid "
                                        + ProcessHandle.current().pid()
                                        + ") was stopped before the nodes met",
                        false);
            }
            log("the launcher is stopping (signal): stopping the workers");
            if (workers != null) {
                workers.stop(options.termTimeout());
            }
            if (r != null && rank >= 0 && options.nnodes() > 1) {
                tellOtherNodes(r, null, true);
            }
        } finally {
            hookDone.countDown();
        }
    }

    // Posts this node's end (reason not null), or leaves as at any end so that the serving node
    // outlives the others' reading of it (leave), on a connection of its own: the hook's main
    // thread may hold the other, and a store that hangs must not hold the launcher.
    private void tellOtherNodes(NodeRendezvous r, String reason, boolean leave) {
        try (TcpStore c =
                AgentStores.connect(r.clientHost(), r.endpoint().port(), HOOK_STORE_TIMEOUT)) {
            PrefixStore store = new PrefixStore(NodeRendezvous.keyPrefix(options), c);
            if (reason != null) {
                String why = reason + " at " + now();
                // the main thread may be between rounds: the next one is told too
                RestartRounds.post(store, round, new Event(Kind.FAILURE, why));
                RestartRounds.post(store, round + 1, new Event(Kind.FAILURE, why));
            }
            if (leave) {
                NodeRendezvous.leave(store, groupRank, options.nnodes(), r.serves(), Set.of());
            }
        } catch (RuntimeException e) {
            log("could not tell the other nodes: " + e.getMessage());
        }
    }

    /** Stops any worker still running and leaves the store; idempotent. */
    @Override
    public void close() {
        LocalWorkers workers;
        boolean hook;
        synchronized (lock) {
            finished = true;
            workers = current;
            hook = shuttingDown;
        }
        if (hook) {
            // The hook tells the other nodes through the store this node may serve: it stays up
            // until the hook is done (bounded as the hook is).
            awaitHook();
        }
        if (workers != null) {
            workers.close();
        }
        if (rdzv != null) {
            rdzv.close();
        }
    }

    private void awaitHook() {
        Duration bound = LocalWorkers.stopBound(options.termTimeout()).plus(HOOK_TELL_BOUND);
        try {
            hookDone.await(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Event runRound(WorkerSetup setup, RestartRounds rounds)
            throws IOException, InterruptedException {
        LocalWorkers workers;
        synchronized (lock) {
            if (shuttingDown) {
                return null;
            }
            workers = LocalWorkers.start(setup, round, out, err, options.termTimeout());
            current = workers;
        }
        heartbeats.reset();
        try {
            Event end = monitor(workers, rounds);
            return end != null && end.kind() == Kind.SUCCESS ? awaitOtherNodes(rounds) : end;
        } finally {
            workers.close();
        }
    }

    // Waits for a local failure, the end of all local workers, or another node's event.
    private Event monitor(LocalWorkers workers, RestartRounds rounds) throws InterruptedException {
        while (true) {
            Optional<WorkerExit> exit = workers.nextExit(options.monitorInterval());
            if (isShuttingDown()) {
                return null;
            }
            if (exit.isPresent() && exit.get().failed()) {
                Kind kind = round < options.maxRestarts() ? Kind.RESTART : Kind.FAILURE;
                return rounds.post(round, new Event(kind, exit.get().describe()));
            }
            if (workers.unreported() == 0) {
                return new Event(Kind.SUCCESS, "");
            }
            if (options.nnodes() > 1) {
                Optional<Event> event = otherNodes(rounds);
                if (event.isPresent()) {
                    return event.get();
                }
            }
        }
    }

    // Another node's event, or a node found dead by its silence (which fails the job: it cannot
    // come back into a round).
    private Optional<Event> otherNodes(RestartRounds rounds) {
        Optional<Event> event = rounds.poll(round);
        if (event.isPresent()) {
            return event;
        }
        return silentNode(Duration.ZERO)
                .map(why -> rounds.post(round, new Event(Kind.FAILURE, why)));
    }

    // Beats, and names a node silent for longer than --heartbeat-timeout and the allowance, if
    // any (it is dead). Between rounds a live node may be silent while it stops its workers.
    private Optional<String> silentNode(Duration allowance) {
        OptionalInt dead = heartbeats.tick(allowance);
        if (dead.isEmpty()) {
            return Optional.empty();
        }
        deadNodes.add(dead.getAsInt());
        return Optional.of(
                "the launcher of node "
                        + dead.getAsInt()
                        + " stopped responding: no heartbeat for "
                        + options.heartbeatTimeout().plus(allowance).toSeconds()
                        + " s (--heartbeat-timeout"
                        + (allowance.isZero() ? "" : ", and the time to stop workers")
                        + ") at "
                        + now());
    }

    // This node's workers succeeded: wait for the others', or for their failure. No deadline:
    // the other nodes' workers may run for long after these (rank 0 writing a checkpoint, say),
    // and a node that dies is found by its silent heartbeat. Leaving early would end the job's
    // store (on node 0) or look like a dead node (elsewhere).
    private Event awaitOtherNodes(RestartRounds rounds) throws InterruptedException {
        rounds.markDone(round);
        while (!rounds.allDone(round)) {
            Optional<Event> event = otherNodes(rounds);
            if (event.isPresent()) {
                return event.get();
            }
            if (isShuttingDown()) {
                return null;
            }
            Thread.sleep(Math.max(1, options.monitorInterval().toMillis()));
        }
        return new Event(Kind.SUCCESS, "");
    }

    private boolean isShuttingDown() {
        synchronized (lock) {
            return shuttingDown;
        }
    }

    private String restarts() {
        return "(--max-restarts " + options.maxRestarts() + ")";
    }

    private void log(String message) {
        err.println("djlrun: " + message);
    }

    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.MILLIS);
    }
}
