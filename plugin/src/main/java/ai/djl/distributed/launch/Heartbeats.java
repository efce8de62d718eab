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

import java.time.Duration;
import java.util.Arrays;
import java.util.OptionalInt;

/**
 * The launchers' heartbeats, so that a node whose launcher died (SIGKILL, a lost machine) is
 * noticed by the others instead of leaving them waiting on workers that may never end. Each
 * launcher adds 1 to its counter {@code beat/RANK} every second while its workers run; a counter
 * that has not moved for {@code --heartbeat-timeout}, as measured by the reader's own clock (the
 * nodes' clocks are never compared), marks its node as dead. Used by one thread.
 */
final class Heartbeats {

    /** How often a launcher beats and reads the others' beats. */
    static final Duration INTERVAL = Duration.ofSeconds(1);

    private final Store store;
    private final int self;
    private final long timeoutNanos;
    private final long[] seen;
    private final long[] movedAt;
    private long nextBeat;

    /**
     * Creates the heartbeats of a node.
     *
     * @param store the launchers' store
     * @param self this node's rank
     * @param nnodes the number of nodes
     * @param timeout how long a counter may stand still before its node counts as dead
     */
    Heartbeats(Store store, int self, int nnodes, Duration timeout) {
        this.store = store;
        this.self = self;
        this.timeoutNanos = timeout.toNanos();
        this.seen = new long[nnodes];
        this.movedAt = new long[nnodes];
        reset();
    }

    /**
     * Starts the clocks afresh, as at the start of a round: nodes that were waiting at a barrier
     * did not beat, and must not count as silent for it.
     */
    void reset() {
        long now = System.nanoTime();
        Arrays.fill(seen, -1);
        Arrays.fill(movedAt, now);
        nextBeat = now;
    }

    /**
     * Beats and reads the other nodes' beats, if a second has passed since the last time; does not
     * block beyond the store's calls, each bounded by {@link NodeRendezvous#callTimeout}.
     *
     * @return the rank of a node silent for longer than the timeout, if any
     * @throws LaunchException if the store is lost
     */
    OptionalInt tick() {
        return tick(Duration.ZERO);
    }

    /**
     * Beats and reads as {@link #tick()}, allowing the other nodes {@code allowance} of silence
     * beyond the timeout (a node stopping its workers does not beat).
     *
     * @param allowance the extra silence allowed
     * @return the rank of a node silent for longer than the timeout and the allowance, if any
     * @throws LaunchException if the store is lost
     */
    OptionalInt tick(Duration allowance) {
        long limit = timeoutNanos + allowance.toNanos();
        long now = System.nanoTime();
        if (seen.length == 1 || now - nextBeat < 0) {
            return OptionalInt.empty();
        }
        nextBeat = now + INTERVAL.toNanos();
        try {
            store.add("beat/" + self, 1);
            for (int node = 0; node < seen.length; ++node) {
                if (node == self) {
                    continue;
                }
                long beats = store.add("beat/" + node, 0);
                if (beats != seen[node]) {
                    seen[node] = beats;
                    movedAt[node] = now;
                } else if (now - movedAt[node] > limit) {
                    return OptionalInt.of(node);
                }
            }
        } catch (StoreException e) {
            throw RestartRounds.lost(e);
        }
        return OptionalInt.empty();
    }
}
