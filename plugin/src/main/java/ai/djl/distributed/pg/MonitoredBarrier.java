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
package ai.djl.distributed.pg;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreTimeoutException;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code torch.distributed.monitored_barrier} for one group: rank 0 collects an acknowledgement
 * from every other rank within the timeout and publishes its verdict; the others wait for it. It
 * runs through the group's store, never through the backend, so it works on every transport and
 * backend, takes no place in the collective sequence (a rank hung in a collective simply never
 * acknowledges) and still works after a failed collective has aborted the backend.
 *
 * <p><b>Keys</b>, under the group's namespace {@code default_pg/<group>/monitored_barrier/<n>/},
 * where {@code n} counts this group's calls on each rank from 0, so that the n-th call of every
 * rank meets the n-th call of the others:
 *
 * <ul>
 *   <li>{@code arrived/<r>}: set by rank r (r &gt; 0) when it arrives; deleted by r once it has
 *       read the verdict, since rank 0 reads no arrival after publishing one.
 *   <li>{@code verdict}: set by rank 0 once every rank has arrived or its deadline has passed:
 *       {@code ok}, or its failure message.
 *   <li>{@code read}: counts the ranks that have read the verdict; the last of the size - 1 deletes
 *       {@code verdict} and {@code read}.
 * </ul>
 *
 * So a call that every rank completes leaves nothing behind; one whose verdict some rank never
 * reads (it died, never called, or gave up first) leaves at most its verdict, the counter and that
 * rank's arrival, which a later call never looks at.
 *
 * <p>Thread-safe. Calls made by several threads of one rank are numbered in the order they start.
 */
final class MonitoredBarrier {

    /**
     * How much longer than twice the timeout a rank other than 0 waits for the verdict. Rank 0's
     * deadline counts from its own call, so a verdict may come up to a timeout after this rank's
     * call (rank 0 arriving that much later: any later and rank 0 is itself the straggler) plus a
     * timeout (rank 0's own wait) plus what rank 0 does after its deadline: a store check for each
     * rank and the verdict's set, a few round trips, with room for a loaded machine's scheduling.
     */
    static final Duration VERDICT_GRACE = Duration.ofSeconds(2);

    private static final String OK = "ok";
    private static final String VERDICT = "verdict";
    private static final String READ = "read";

    private final ProcessGroup group;
    private final Store store;
    private final AtomicLong calls = new AtomicLong();

    /**
     * Creates the barrier of a group.
     *
     * @param group the group
     * @param groupStore the group's namespace, {@code default_pg/<group>}
     */
    MonitoredBarrier(ProcessGroup group, Store groupStore) {
        this.group = group;
        this.store = new PrefixStore("monitored_barrier", groupStore);
    }

    /**
     * Runs one monitored barrier; see {@link ProcessGroup#monitoredBarrier(Duration, boolean)}.
     *
     * @param start when the caller called, in {@link System#nanoTime()} terms
     * @param timeout how long rank 0 waits for the others, from {@code start}; checked
     * @param waitAllRanks whether rank 0 names every missing rank rather than the first
     */
    void run(long start, Duration timeout, boolean waitAllRanks) {
        if (group.getSize() == 1) {
            return;
        }
        long n = calls.getAndIncrement();
        Store call = new PrefixStore(String.valueOf(n), store);
        String where = " (group " + group.getName() + ", call " + n + ")";
        if (group.getRank() == 0) {
            collect(call, start, timeout, waitAllRanks, where);
        } else {
            acknowledge(call, start, timeout, where);
        }
    }

    private void collect(
            Store call, long start, Duration timeout, boolean waitAllRanks, String where) {
        List<Integer> missing = awaitArrivals(call, start, nanos(timeout));
        if (missing.isEmpty()) {
            call.set(VERDICT, OK);
            return;
        }
        // As PyTorch's: every missing rank, or the first (the lowest, whose wait fails first).
        List<Integer> named = waitAllRanks ? missing : missing.subList(0, 1);
        String verdict =
                "[Rank 0]: "
                        + (named.size() == 1 ? "Rank " : "Ranks ")
                        + describe(named)
                        + " failed to pass monitoredBarrier in "
                        + timeout.toMillis()
                        + " ms"
                        + where;
        CommunicationException failure = new CommunicationException(verdict, named.get(0));
        try {
            call.set(VERDICT, verdict);
        } catch (RuntimeException e) {
            // The others will fail at their deadline instead; this rank's verdict still stands.
            failure.addSuppressed(e);
        }
        throw failure;
    }

    /** Waits for every other rank's arrival until the deadline; returns those missing, in order. */
    private List<Integer> awaitArrivals(Store call, long start, long budget) {
        List<String> keys = new ArrayList<>();
        for (int r = 1; r < group.getSize(); r++) {
            keys.add(arrival(r));
        }
        long left = budget - (System.nanoTime() - start);
        if (left > 0) {
            try {
                call.waitFor(keys, Duration.ofNanos(left));
                return List.of();
            } catch (StoreTimeoutException e) {
                // Some rank is missing: find which, below.
            }
        }
        // A rank that arrives during this loop counts as arrived: it did, before the verdict.
        List<Integer> missing = new ArrayList<>();
        for (int r = 1; r < group.getSize(); r++) {
            if (!call.check(List.of(arrival(r)))) {
                missing.add(r);
            }
        }
        return missing;
    }

    private void acknowledge(Store call, long start, Duration timeout, String where) {
        int rank = group.getRank();
        call.set(arrival(rank), "1");
        long budget = nanos(timeout) * 2 + nanos(VERDICT_GRACE);
        long left = Math.max(1, budget - (System.nanoTime() - start));
        try {
            call.waitFor(List.of(VERDICT), Duration.ofNanos(left));
        } catch (StoreTimeoutException e) {
            throw new CommunicationException(
                    reachedBut(rank)
                            + " gave no verdict within "
                            + budget / 1_000_000
                            + " ms (twice the "
                            + timeout.toMillis()
                            + " ms timeout, plus "
                            + VERDICT_GRACE.toMillis()
                            + " ms): rank 0 is dead, stuck, or has not called monitoredBarrier"
                            + where,
                    0,
                    e);
        }
        // The verdict stays until this rank counts itself below, so this get cannot block.
        String verdict = call.getString(VERDICT);
        call.deleteKey(arrival(rank));
        if (call.add(READ, 1) == group.getSize() - 1) {
            call.deleteKey(VERDICT);
            call.deleteKey(READ);
        }
        if (!OK.equals(verdict)) {
            throw new CommunicationException(reachedBut(rank) + " reported: " + verdict, 0);
        }
    }

    /** The start of a failure on a rank other than 0: "Rank 2 reached ..., but rank 0". */
    private String reachedBut(int rank) {
        return "Rank "
                + describe(List.of(rank))
                + " reached monitoredBarrier, but rank "
                + describe(List.of(0));
    }

    private static String arrival(int rank) {
        return "arrived/" + rank;
    }

    /** Names group ranks, with their world ranks where they differ: "1 (world rank 3), 2". */
    private String describe(List<Integer> ranks) {
        StringBuilder s = new StringBuilder();
        for (int r : ranks) {
            if (s.length() > 0) {
                s.append(", ");
            }
            s.append(r);
            int world = group.getGlobalRank(r);
            if (world != r) {
                s.append(" (world rank ").append(world).append(')');
            }
        }
        return s.toString();
    }

    /** Returns a duration in nanoseconds, saturating well below overflow for absurd durations. */
    private static long nanos(Duration d) {
        try {
            return Math.min(d.toNanos(), Long.MAX_VALUE / 4);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }
}
