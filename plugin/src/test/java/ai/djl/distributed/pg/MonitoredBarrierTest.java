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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreTimeoutException;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@link ProcessGroup#monitoredBarrier} on the in-process harness: every rank passes call after
 * call, leaving no key behind; ranks that never call, call late or hang in a collective are named
 * by rank 0 and, through its verdict, by the others; a silent rank 0 is named at the others'
 * deadline; a sub-group numbers its calls in its own namespace. The barrier goes through the store,
 * so each test runs over every transport to show that it needs none of them and leaves their
 * collectives in order.
 */
@Timeout(120)
class MonitoredBarrierTest {

    private static final Duration T = Duration.ofSeconds(30);
    private static final Duration SHORT = Duration.ofSeconds(2);

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void everyRankPassesCallAfterCallAndNoKeyIsLeft(String transport) throws Exception {
        int calls = 100;
        MultiRank.run(
                3,
                transport,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    // Rank 0 arrives last, 600 ms after rank 2: its deadline counts from its own
                    // call, and the others wait for its verdict.
                    Thread.sleep(300L * (2 - r));
                    g.monitoredBarrier(Duration.ofSeconds(5), true);
                    for (int i = 1; i < calls; i++) {
                        g.monitoredBarrier(T, i % 2 == 0);
                        if (i % 10 == 0) {
                            assertSumOfRanks(g, m); // collectives keep their own order between
                        }
                    }
                    g.barrier(); // every rank is past its last monitored barrier
                    if (r == 0) {
                        assertNoKeysLeft(g.store(), "0", calls, 3);
                    }
                    return null;
                });
    }

    /**
     * World of 4: rank 1 never calls, rank 3 calls only once rank 0 has given its verdict, rank 2
     * is on time. Rank 0 names ranks 1 and 3 with {@code waitAllRanks}, else rank 1 only; ranks 2
     * and 3 name rank 0's verdict, rank 3 at once.
     */
    @ParameterizedTest
    @CsvSource({"tcp,true", "tcp,false", "shm,true", "shm,false", "auto,true", "auto,false"})
    void rankZeroNamesTheRanksThatNeverCameOrCameLate(String transport, boolean waitAllRanks)
            throws Exception {
        String verdict =
                (waitAllRanks ? "[Rank 0]: Ranks 1, 3" : "[Rank 0]: Rank 1")
                        + " failed to pass monitoredBarrier in 2000 ms (group 0, call 0)";
        CountDownLatch judged = new CountDownLatch(1);
        MultiRank.run(
                4,
                transport,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    g.barrier(); // the ranks on time arrive together
                    if (r == 1) {
                        return null;
                    }
                    if (r == 3) {
                        assertTrue(judged.await(30, TimeUnit.SECONDS), "rank 0 never judged");
                    }
                    long start = System.nanoTime();
                    CommunicationException e =
                            assertThrows(
                                    CommunicationException.class,
                                    () -> g.monitoredBarrier(SHORT, waitAllRanks));
                    double s = seconds(start);
                    if (r == 0) {
                        judged.countDown();
                        assertEquals(verdict, e.getMessage());
                        assertEquals(1, e.getPeerRank());
                        assertTrue(s > 1.9 && s < 10, "rank 0 failed after " + s + " s");
                    } else {
                        assertEquals(reported(r, verdict), e.getMessage());
                        assertEquals(0, e.getPeerRank());
                        double max = r == 3 ? 5 : 10;
                        assertTrue(s < max, "rank " + r + " failed after " + s + " s");
                    }
                    return null;
                });
    }

    /**
     * World of 3: rank 2 hangs in an all-reduce the others have not joined. Rank 0 names it and
     * rank 1 names the verdict; the barrier took no place among the collectives, so the others then
     * join the all-reduce and release rank 2, whose late call fails on the verdict; the group is
     * not aborted, and the next barrier passes on every rank.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void aRankHungInACollectiveIsNamedAndTheGroupGoesOn(String transport) throws Exception {
        String verdict =
                "[Rank 0]: Rank 2 failed to pass monitoredBarrier in 2000 ms (group 0, call 0)";
        MultiRank.run(
                3,
                transport,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    NDArray a = m.create(new float[] {r});
                    CommunicationException e;
                    if (r == 2) {
                        g.allReduce(a); // until ranks 0 and 1 have failed their barrier
                        e =
                                assertThrows(
                                        CommunicationException.class,
                                        () -> g.monitoredBarrier(SHORT, true));
                    } else {
                        long start = System.nanoTime();
                        e =
                                assertThrows(
                                        CommunicationException.class,
                                        () -> g.monitoredBarrier(SHORT, true));
                        double s = seconds(start);
                        assertTrue(s > 1.9 && s < 10, "rank " + r + " failed after " + s + " s");
                        g.allReduce(a);
                    }
                    assertEquals(3f, a.getFloat(0));
                    assertEquals(r == 0 ? verdict : reported(r, verdict), e.getMessage());
                    g.monitoredBarrier();
                    assertSumOfRanks(g, m);
                    g.barrier();
                    if (r == 0) {
                        assertNoKeysLeft(g.store(), "0", 2, 3);
                    }
                    return null;
                });
    }

    /** World of 3 whose rank 0 never calls: ranks 1 and 2 fail at their deadline naming rank 0. */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void theOthersNameASilentRankZeroAtTheirDeadline(String transport) throws Exception {
        CountDownLatch done = new CountDownLatch(2);
        MultiRank.run(
                3,
                transport,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    if (r == 0) {
                        assertTrue(done.await(60, TimeUnit.SECONDS), "the others never failed");
                        return null;
                    }
                    long start = System.nanoTime();
                    try {
                        CommunicationException e =
                                assertThrows(
                                        CommunicationException.class,
                                        () -> g.monitoredBarrier(Duration.ofSeconds(1), false));
                        double s = seconds(start);
                        // Twice the timeout plus the 2-second grace: 4 s.
                        assertTrue(s > 3.9 && s < 12, "rank " + r + " failed after " + s + " s");
                        assertEquals(0, e.getPeerRank());
                        assertInstanceOf(StoreTimeoutException.class, e.getCause());
                        assertTrue(
                                e.getMessage()
                                        .startsWith(
                                                "Rank "
                                                        + r
                                                        + " reached monitoredBarrier, but rank 0"
                                                        + " gave no verdict within 4000 ms"),
                                e.getMessage());
                        assertTrue(e.getMessage().endsWith("(group 0, call 0)"), e.getMessage());
                    } finally {
                        done.countDown();
                    }
                    return null;
                });
    }

    /**
     * World of 4 with the odd ranks in a sub-group: the sub-group's five calls between the world's
     * two do not shift the world's numbering, and its keys live under its own name; a failure in it
     * names the missing rank by group and world rank.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void aSubGroupNumbersItsCallsInItsOwnNamespace(String transport) throws Exception {
        String verdict =
                "[Rank 0]: Rank 1 (world rank 3) failed to pass monitoredBarrier in 2000 ms"
                        + " (group 1, call 5)";
        MultiRank.run(
                4,
                transport,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    Optional<ProcessGroup> odd = g.newGroup(1, 3);
                    g.monitoredBarrier(T, true);
                    if (odd.isPresent()) {
                        for (int i = 0; i < 5; i++) {
                            odd.get().monitoredBarrier();
                        }
                    }
                    g.monitoredBarrier(T, true);
                    g.barrier(); // the sub-group's ranks are past its fifth call
                    if (r == 1) {
                        CommunicationException e =
                                assertThrows(
                                        CommunicationException.class,
                                        () -> odd.get().monitoredBarrier(SHORT, true));
                        assertEquals(verdict, e.getMessage());
                        assertEquals(1, e.getPeerRank());
                    }
                    g.barrier();
                    if (r == 0) {
                        Store s = g.store();
                        assertNoKeysLeft(s, "0", 2, 4);
                        assertNoKeysLeft(s, "1", 5, 2);
                        // Rank 1 of the sub-group never read call 5's verdict: it stays.
                        String key = "default_pg/1/monitored_barrier/5/verdict";
                        assertEquals(verdict, new String(s.get(key), StandardCharsets.UTF_8));
                    }
                    return null;
                });
    }

    private static void assertSumOfRanks(ProcessGroup g, NDManager m) {
        NDArray a = m.create(new float[] {g.getRank()});
        g.allReduce(a);
        int n = g.getSize();
        assertEquals(n * (n - 1) / 2f, a.getFloat(0));
    }

    /** Asserts that calls 0 to {@code calls - 1} of group {@code group} left no key. */
    static void assertNoKeysLeft(Store store, String group, int calls, int size) {
        for (int n = 0; n < calls; n++) {
            String call = "default_pg/" + group + "/monitored_barrier/" + n + "/";
            List<String> keys = new ArrayList<>(List.of(call + "verdict", call + "read"));
            for (int r = 1; r < size; r++) {
                keys.add(call + "arrived/" + r);
            }
            for (String key : keys) {
                assertFalse(store.check(List.of(key)), key + " was left behind");
            }
        }
    }

    /** Returns what rank {@code rank} (not 0) says when rank 0 gave {@code verdict}. */
    static String reported(int rank, String verdict) {
        return "Rank " + rank + " reached monitoredBarrier, but rank 0 reported: " + verdict;
    }

    static double seconds(long start) {
        return (System.nanoTime() - start) / 1e9;
    }
}
