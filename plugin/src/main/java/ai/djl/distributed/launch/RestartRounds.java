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

import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreException;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The attempts (restart rounds) of a job, agreed by the launchers of all nodes in the agent store.
 * In round {@code r} (TORCHELASTIC_RESTART_COUNT = r):
 *
 * <ol>
 *   <li>every node waits at the barrier {@code round/r} and starts its workers;
 *   <li>the first node whose worker fails posts the round's one event, {@code round/r/event}:
 *       RESTART while restarts remain, else FAILURE, naming the failed rank (an atomic
 *       compare-and-set: later failures of the same round see the first event instead);
 *   <li>every node polls the event: on RESTART all stop their workers and meet at {@code
 *       round/r+1}, on FAILURE all stop their workers and exit non-zero with its message;
 *   <li>a node whose workers all succeeded counts itself on {@code round/r/done} and waits until
 *       every node has, or an event comes (its workers then restart with the others).
 * </ol>
 *
 * <p>Used by one thread; a lost store fails the launch with a {@link LaunchException}.
 */
final class RestartRounds {

    /** What ends a round. */
    enum Kind {
        /** Every worker of this node exited with 0. */
        SUCCESS,
        /** A worker failed and restarts remain: every node restarts its workers. */
        RESTART,
        /** A worker failed and no restart remains: every node stops. */
        FAILURE
    }

    /**
     * What ended a round, with the failed worker's description.
     *
     * @param kind what happened
     * @param message the failure, as {@link WorkerExit#describe()} wrote it; empty for SUCCESS
     */
    record Event(Kind kind, String message) {

        byte[] encode() {
            return (kind + "\n" + message).getBytes(StandardCharsets.UTF_8);
        }

        static Event decode(byte[] bytes) {
            String s = new String(bytes, StandardCharsets.UTF_8);
            int nl = s.indexOf('\n');
            try {
                return new Event(Kind.valueOf(s.substring(0, nl)), s.substring(nl + 1));
            } catch (IllegalArgumentException | StringIndexOutOfBoundsException e) {
                throw new LaunchException("unreadable round event in the agent store: '" + s + "'");
            }
        }
    }

    private final NodeRendezvous rdzv;
    private final Store store;
    private final int nnodes;

    /**
     * Creates the rounds of a job.
     *
     * @param rdzv the nodes' rendezvous, whose store holds the rounds
     * @param nnodes the number of nodes
     */
    RestartRounds(NodeRendezvous rdzv, int nnodes) {
        this.rdzv = rdzv;
        this.store = rdzv.store();
        this.nnodes = nnodes;
    }

    /**
     * Waits for every node to begin a restart round (round 0 was met by {@link
     * NodeRendezvous#assign()}); blocks up to {@code --rdzv-timeout}.
     *
     * @param round the round, at least 1
     * @param failure asked while waiting: a reason no round can begin (a node found dead), which is
     *     then the round's event, or empty
     * @return the round's event if a node gave up before every node came (its launcher was stopped
     *     or found dead), else empty
     * @throws InterruptedException if interrupted
     */
    Optional<Event> begin(int round, Supplier<Optional<String>> failure)
            throws InterruptedException {
        return rdzv.barrier(key(round, ""), "restart " + round, key(round, "/event"), failure)
                .map(Event::decode);
    }

    /**
     * Posts this node's event, unless another node posted one first.
     *
     * @param round the round
     * @param event RESTART or FAILURE
     * @return the round's event: this one, or the one posted first
     */
    Event post(int round, Event event) {
        return post(store, round, event);
    }

    /**
     * Posts an event in a store, unless one was posted first.
     *
     * @param store the launchers' store
     * @param round the round
     * @param event RESTART or FAILURE
     * @return the round's event
     */
    static Event post(Store store, int round, Event event) {
        try {
            byte[] won = store.compareSet(key(round, "/event"), new byte[0], event.encode());
            return Event.decode(won);
        } catch (StoreException e) {
            throw lost(e);
        }
    }

    /**
     * Returns the round's event if a node has posted one; does not block.
     *
     * @param round the round
     * @return the event, if any
     */
    Optional<Event> poll(int round) {
        String key = key(round, "/event");
        try {
            return store.check(List.of(key))
                    ? Optional.of(Event.decode(store.get(key)))
                    : Optional.empty();
        } catch (StoreException e) {
            throw lost(e);
        }
    }

    /**
     * Counts this node as done (all its workers exited with 0) in a round.
     *
     * @param round the round
     */
    void markDone(int round) {
        try {
            store.add(key(round, "/done"), 1);
        } catch (StoreException e) {
            throw lost(e);
        }
    }

    /**
     * Returns how many nodes are done in a round.
     *
     * @param round the round
     * @return the count, up to the number of nodes
     */
    long done(int round) {
        try {
            return store.add(key(round, "/done"), 0);
        } catch (StoreException e) {
            throw lost(e);
        }
    }

    /**
     * Returns whether every node is done in a round.
     *
     * @param round the round
     * @return {@code true} when all nodes' workers succeeded
     */
    boolean allDone(int round) {
        return done(round) >= nnodes;
    }

    private static String key(int round, String suffix) {
        return "round/" + round + suffix;
    }

    /**
     * Returns the failure of a launch whose store went away.
     *
     * @param e the store's failure
     * @return the exception to throw
     */
    static LaunchException lost(StoreException e) {
        return new LaunchException(
                "lost the agent store (did the launcher serving it exit, hang or lose the"
                        + " network? --heartbeat-timeout bounds each call): "
                        + e.getMessage(),
                e);
    }
}
