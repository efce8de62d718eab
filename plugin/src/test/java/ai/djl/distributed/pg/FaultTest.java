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

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Ranks that disagree, or never arrive, fail with a clear error instead of hanging. */
@Timeout(120)
class FaultTest {

    /** Where a collective runs (package-private in the CPU backend). */
    private static final String COLLECTIVE_RUNNER =
            "ai.djl.distributed.backend.cpu.CollectiveRunner";

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void differentCollectivesFailOnEveryRankNamingBothSides(String transport) throws Exception {
        MultiRank.run(
                2,
                transport,
                Duration.ofSeconds(60),
                (g, m) -> {
                    NDArray a = m.zeros(new Shape(10));
                    long start = System.nanoTime();
                    CommunicationException e =
                            assertThrows(
                                    CommunicationException.class,
                                    () -> {
                                        if (g.getRank() == 0) {
                                            g.allReduce(a);
                                        } else {
                                            // The root of a broadcast expects nothing: it may
                                            // finish before the mismatch is seen, and then its
                                            // next collective fails.
                                            g.broadcast(a, 1);
                                            g.barrier();
                                        }
                                    });
                    String msg = e.getMessage();
                    assertTrue(msg.contains("mismatch") || msg.contains("aborted"), msg);
                    assertTrue(
                            msg.contains("ALL_REDUCE") && msg.contains("rank " + (1 - g.getRank())),
                            msg);
                    assertTrue(System.nanoTime() - start < 20e9, "failed fast, not at the timeout");
                    // The group is aborted: later collectives fail at once.
                    assertThrows(CommunicationException.class, () -> g.allReduce(a));
                    return null;
                });
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void differentSizesFailNamingBothSizes(String transport) throws Exception {
        MultiRank.run(
                3,
                transport,
                Duration.ofSeconds(60),
                (g, m) -> {
                    NDArray a = m.zeros(new Shape(g.getRank() == 2 ? 11 : 10));
                    CommunicationException e =
                            assertThrows(CommunicationException.class, () -> g.allReduce(a));
                    assertTrue(
                            e.getMessage().contains("x 10") && e.getMessage().contains("x 11"),
                            e.getMessage());
                    return null;
                });
    }

    /**
     * Both ranks of a size mismatch on the board fail at once, every time: each aborts its
     * transports while the other's abort notice reaches it, and neither may wait on the other's
     * (nor on itself: a link aborted by the thread telling the peers reports its peer gone to that
     * same thread). Forty tries, each far below the timeout.
     */
    @Test
    void aMismatchFailsBothRanksPromptlyEveryTime() throws Exception {
        for (int i = 0; i < 40; i++) {
            MultiRank.run(
                    2,
                    "auto",
                    Duration.ofSeconds(10),
                    (g, m) -> {
                        NDArray a = m.ones(new Shape(g.getRank() == 1 ? 1001 : 1000));
                        long start = System.nanoTime();
                        assertThrows(CommunicationException.class, () -> g.allReduce(a));
                        long ms = (System.nanoTime() - start) / 1_000_000;
                        // far below the 10 s timeout: a rank that waited for it took 10,000
                        assertTrue(ms < 5_000, "rank " + g.getRank() + " failed after " + ms);
                        return null;
                    });
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void aRankThatNeverArrivesFailsTheOthersAtTheTimeoutNamingIt(String transport)
            throws Exception {
        List<String> messages = new java.util.concurrent.CopyOnWriteArrayList<>();
        MultiRank.run(
                3,
                transport,
                Duration.ofSeconds(2),
                Duration.ofSeconds(60),
                (g, m) -> {
                    if (g.getRank() == 2) {
                        // skips the collective, and comes back (to the harness's closing
                        // barrier) well after the others' bound below: they fail at their timeout,
                        // not at its return
                        Thread.sleep(9000);
                        return null;
                    }
                    NDArray a = m.zeros(new Shape(100));
                    long start = System.nanoTime();
                    CommunicationException e =
                            assertThrows(CommunicationException.class, () -> g.allReduce(a));
                    double s = (System.nanoTime() - start) / 1e9;
                    assertTrue(s >= 1.5 && s < 8, "failed after " + s + " s");
                    messages.add(e.getMessage());
                    return null;
                });
        // Rank 1 waits on rank 2 directly; rank 0 on rank 1, or hears of rank 1's failure.
        assertTrue(
                messages.stream().anyMatch(s -> s.contains("waiting for rank 2")),
                messages.toString());
    }

    /**
     * A rank on the shared board (a barrier) against one whose collective only receives (a large
     * broadcast's leaf): no message ever crosses between them, yet both fail fast, because every
     * rank announces on the board which collective it runs.
     */
    @ParameterizedTest
    @ValueSource(strings = {"shm", "auto"})
    void aBoardCollectiveAgainstAReceiveOnlyOneFailsFast(String transport) throws Exception {
        MultiRank.run(
                2,
                transport,
                Duration.ofSeconds(60),
                (g, m) -> {
                    NDArray large = m.zeros(new Shape(100_000));
                    String msg =
                            failsFast(
                                            () -> {
                                                if (g.getRank() == 0) {
                                                    g.barrier();
                                                } else {
                                                    g.broadcast(large, 0);
                                                }
                                            })
                                    .getMessage();
                    assertTrue(msg.contains("BARRIER") && msg.contains("BROADCAST"), msg);
                    assertTrue(msg.contains("rank " + (1 - g.getRank())), msg);
                    return null;
                });
    }

    /**
     * A message that arrived before its receiver began the collective is compared with it even when
     * the receiver then waits on another transport only: here rank 1's large broadcast waits on
     * shared memory while rank 0's small reduce sent its data over TCP first.
     */
    @Test
    void aMismatchedMessageThatCameFirstIsFoundWhileWaitingElsewhere() throws Exception {
        MultiRank.run(
                2,
                "auto",
                Duration.ofSeconds(60),
                (g, m) -> {
                    NDArray small = m.zeros(new Shape(10));
                    NDArray large = m.zeros(new Shape(100_000));
                    String msg =
                            failsFast(
                                            () -> {
                                                if (g.getRank() == 0) {
                                                    g.reduce(small, 1, ReduceOp.SUM);
                                                    g.barrier();
                                                } else {
                                                    Thread.sleep(200); // the reduce comes first
                                                    g.broadcast(large, 0);
                                                }
                                            })
                                    .getMessage();
                    assertTrue(msg.contains("REDUCE") && msg.contains("BROADCAST"), msg);
                    return null;
                });
    }

    /** A rank that destroys its group fails a peer waiting for it on the board at once. */
    @ParameterizedTest
    @ValueSource(strings = {"shm", "auto"})
    void aPeerThatDestroysItsGroupFailsABoardWaiterAtOnce(String transport) throws Exception {
        MultiRank.run(
                2,
                transport,
                Duration.ofSeconds(60),
                (g, m) -> {
                    if (g.getRank() == 1) {
                        g.close();
                        return null;
                    }
                    String msg = failsFast(g::barrier).getMessage();
                    assertTrue(msg.contains("rank 1 has destroyed its process group"), msg);
                    return null;
                });
    }

    /**
     * An interrupted wait does not return while the collective may still write the caller's array
     * (the caller would free it under the backend): it aborts the collective, waits for it to end,
     * then throws with the interrupt flag set. The peer never posts, so without the abort the
     * collective would run to the 60-second timeout.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void anInterruptedWaitAbortsTheCollectiveAndReturnsOnlyOnceItHasEnded(String transport)
            throws Exception {
        withSilentRankZero(
                transport,
                Duration.ofSeconds(60),
                (g, m) -> {
                    NDArray a = m.zeros(new Shape(1000));
                    Work w = g.broadcastAsync(a, 0);
                    long start = System.nanoTime();
                    Thread.currentThread().interrupt();
                    DistributedException e = assertThrows(DistributedException.class, w::waitFor);
                    assertTrue(Thread.interrupted(), "the interrupt flag is kept");
                    assertTrue(w.isCompleted(), "returned while the broadcast still ran");
                    assertTrue(!w.isSuccess(), "the broadcast was aborted");
                    assertTrue(e.getMessage().contains("interrupted"), e.getMessage());
                    assertTrue(System.nanoTime() - start < 20e9, "aborted, not timed out");
                    // The group is aborted, as after any failed collective.
                    assertThrows(CommunicationException.class, () -> g.allReduce(a));
                });
    }

    /**
     * Destroying a group from an interrupted thread (a shutdown, a test harness) while one of its
     * collectives runs and another waits in line fails both, and returns only once both have ended:
     * the backend frees its memory after that, and the queued one's caller must not wait on a work
     * that never completes. The peer never joins, so only the abort ends them early.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void anInterruptedDestroyEndsEveryCollectiveBeforeItReturns(String transport) throws Exception {
        withSilentRankZero(
                transport,
                Duration.ofSeconds(60),
                (g, m) -> {
                    NDArray a = m.zeros(new Shape(1000));
                    NDArray b = m.zeros(new Shape(1000));
                    Work running = g.broadcastAsync(a, 0);
                    Work queued = g.allReduceAsync(b, ReduceOp.SUM);
                    long start = System.nanoTime();
                    Thread.currentThread().interrupt();
                    g.close();
                    assertTrue(Thread.interrupted(), "the interrupt flag is kept");
                    assertTrue(running.isCompleted(), "returned while the broadcast ran");
                    assertTrue(queued.isCompleted(), "the queued all-reduce never ended");
                    assertTrue(!running.isSuccess() && !queued.isSuccess(), "both failed");
                    assertTrue(System.nanoTime() - start < 20e9, "aborted, not timed out");
                });
    }

    /**
     * A blocking collective runs on its caller's thread; destroying the group from another thread
     * waits for it to end (here at its 2-second deadline, the peer being silent) before the backend
     * frees what it uses, as it waits for collectives run by the backend's own thread. Checked
     * causally: the destroy begins once the caller is inside the collective, and when it returns
     * the caller is no longer there (were it not waiting, the caller would still be inside, until
     * its deadline).
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void aDestroyWaitsForACollectiveRunningOnItsCallersThread(String transport) throws Exception {
        withSilentRankZero(
                transport,
                Duration.ofSeconds(2),
                (g, m) -> {
                    NDArray a = m.zeros(new Shape(1000));
                    CompletableFuture<CommunicationException> failure = new CompletableFuture<>();
                    Thread caller =
                            new Thread(
                                    () -> {
                                        try {
                                            g.allReduce(a);
                                            failure.completeExceptionally(
                                                    new AssertionError("it succeeded"));
                                        } catch (CommunicationException e) {
                                            failure.complete(e);
                                        }
                                    });
                    caller.start();
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (!inCollective(caller)) {
                        assertTrue(
                                System.nanoTime() < deadline && !failure.isDone(),
                                "the caller never ran the collective on its own thread");
                        Thread.sleep(1);
                    }
                    g.close();
                    assertFalse(
                            inCollective(caller),
                            "destroy returned while the collective still ran on its caller");
                    assertTrue(failure.get(10, TimeUnit.SECONDS) != null);
                    caller.join(10_000);
                });
    }

    /** Whether {@code t} is running a collective itself (the backend runs it on its caller). */
    private static boolean inCollective(Thread t) {
        for (StackTraceElement frame : t.getStackTrace()) {
            if (frame.getClassName().equals(COLLECTIVE_RUNNER)
                    && frame.getMethodName().equals("run")) {
                return true;
            }
        }
        return false;
    }

    /** Rank 1's part of a two-rank test whose rank 0 stays silent. */
    private interface RankOne {
        void run(ProcessGroup group, NDManager manager) throws Exception;
    }

    /**
     * Runs {@code body} as rank 1 of two, while rank 0 joins no collective and calls nothing, not
     * even the harness's closing barrier (which rank 1's collectives would fail on as a mismatch),
     * until rank 1 is through.
     */
    private static void withSilentRankZero(String transport, Duration timeout, RankOne body)
            throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        MultiRank.run(
                2,
                transport,
                timeout,
                (g, m) -> {
                    if (g.getRank() == 0) {
                        assertTrue(done.await(30, TimeUnit.SECONDS), "rank 1 never finished");
                        return null;
                    }
                    try {
                        body.run(g, m);
                        return null;
                    } finally {
                        done.countDown();
                    }
                });
    }

    /** Runs {@code body}, which must fail with a CommunicationException well before the timeout. */
    private static CommunicationException failsFast(Executable body) {
        long start = System.nanoTime();
        CommunicationException e = assertThrows(CommunicationException.class, body);
        assertTrue(System.nanoTime() - start < 20e9, "failed fast, not at the timeout");
        return e;
    }
}
