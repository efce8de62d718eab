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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Semantics at the edges of the process-group API: views written through, arguments checked on this
 * rank before anything is sent, {@code newGroup()} without ranks, point-to-point deadlines and
 * closing a sub-group while others work.
 */
@Timeout(120)
class ProcessGroupSemanticsTest {

    private static final Duration T = Duration.ofSeconds(30);

    /** Where collectives run, and a group's close waits for them (package-private). */
    private static final String COLLECTIVE_RUNNER =
            "ai.djl.distributed.backend.cpu.CollectiveRunner";

    /**
     * A sub-group still connecting when its world is destroyed is closed and refused, not handed
     * back open with threads and sockets that the world's close never saw.
     */
    @Test
    void aGroupStillConnectingWhenTheWorldIsDestroyedIsRefused() throws Exception {
        CountDownLatch destroyed = new CountDownLatch(1);
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    if (g.getRank() == 1) {
                        assertTrue(destroyed.await(30, TimeUnit.SECONDS));
                        // Rank 0 closes its side as soon as it is made: either outcome here.
                        try {
                            g.newGroup().ifPresent(ProcessGroup::close);
                        } catch (RuntimeException expected) {
                            // the peer went away during the set-up
                        }
                        return null;
                    }
                    CompletableFuture<Optional<ProcessGroup>> made = new CompletableFuture<>();
                    Thread t =
                            new Thread(
                                    () -> {
                                        try {
                                            made.complete(g.newGroup());
                                        } catch (RuntimeException e) {
                                            made.completeExceptionally(e);
                                        }
                                    });
                    t.start();
                    // Rank 0 waits inside the new group's set-up for rank 1, outside the lock.
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                    while (!blockedIn(t, GroupContext.class.getName(), "create")) {
                        assertTrue(
                                System.nanoTime() < deadline, "newGroup never waited for rank 1");
                        Thread.sleep(5);
                    }
                    g.close();
                    destroyed.countDown();
                    ExecutionException e =
                            assertThrows(
                                    ExecutionException.class, () -> made.get(30, TimeUnit.SECONDS));
                    assertTrue(e.getCause() instanceof IllegalStateException, e.toString());
                    assertTrue(
                            e.getCause().getMessage().contains("destroyed while group"),
                            e.getCause().getMessage());
                    t.join(10_000);
                    return null;
                });
    }

    private static boolean blockedIn(Thread t, String className, String method) {
        Thread.State state = t.getState();
        if (state != Thread.State.WAITING && state != Thread.State.TIMED_WAITING) {
            return false;
        }
        for (StackTraceElement frame : t.getStackTrace()) {
            if (frame.getClassName().equals(className) && frame.getMethodName().equals(method)) {
                return true;
            }
        }
        return false;
    }

    /**
     * In-place collectives on a view (a column, a transpose) write through to the array it views,
     * as PyTorch's do, and leave no copy behind in the array's manager.
     */
    @Test
    void collectivesOnViewsWriteThroughToTheViewedArray() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    try (NDManager s = m.newSubManager()) {
                        // w = [[0 1 2] [3 4 5]] + 10r; its column 0 is not contiguous
                        NDArray w = s.arange(0f, 6f).add(10f * r).reshape(2, 3);
                        NDArray column = w.get(":, 0");
                        int before = s.getManagedArrays().size();
                        g.allReduce(column, ReduceOp.SUM);
                        // Column 0 summed over ranks (0 + 10, 3 + 13), the rest untouched.
                        float[] want = {
                            10f, 1 + 10f * r, 2 + 10f * r, 16f, 4 + 10f * r, 5 + 10f * r
                        };
                        assertArrayEquals(want, w.toFloatArray());
                        assertEquals(before, s.getManagedArrays().size(), "arrays left in manager");

                        // A transposed output of a broadcast, and a column as an all-gather output.
                        NDArray b = s.arange(0f, 6f).add(100f * r).reshape(2, 3);
                        g.broadcast(b.transpose(), 1);
                        assertArrayEquals(
                                new float[] {100, 101, 102, 103, 104, 105}, b.toFloatArray());
                        NDArray table = s.zeros(new Shape(2, 2));
                        List<NDArray> outs = List.of(table.get(":, 0"), table.get(":, 1"));
                        g.allGather(outs, s.create(new float[] {r, r + 0.5f}));
                        assertArrayEquals(new float[] {0f, 1f, 0.5f, 1.5f}, table.toFloatArray());
                    }
                    return null;
                });
    }

    @Test
    void allToAllChecksThisRanksOwnBlock() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    List<NDArray> ins = List.of(m.zeros(new Shape(2)), m.zeros(new Shape(2)));
                    List<NDArray> outs = new ArrayList<>(ins.size());
                    outs.add(m.zeros(new Shape(2)));
                    outs.add(m.zeros(new Shape(2)));
                    outs.set(r, m.zeros(new Shape(3)));
                    IllegalArgumentException e =
                            assertThrows(
                                    IllegalArgumentException.class, () -> g.allToAll(outs, ins));
                    assertTrue(e.getMessage().startsWith("outputs[" + r + "]: 3"), e.getMessage());

                    NDArray in = m.zeros(new Shape(4, 2));
                    NDArray out = m.zeros(new Shape(5, 2));
                    long[] outSplits = r == 0 ? new long[] {3, 2} : new long[] {2, 3};
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.allToAllSingle(out, in, outSplits, null));
                    assertTrue(
                            e.getMessage().startsWith("output splits[" + r + "]: 3 rows"),
                            e.getMessage());
                    // Nothing was sent: the group still works.
                    NDArray ok = m.create(new float[] {1});
                    g.allReduce(ok);
                    assertEquals(2f, ok.getFloat(0));
                    return null;
                });
    }

    /**
     * Collectives run in issue order and read their inputs when they run, so one issued after
     * another sees its result without waiting for it first, whether its arrays are contiguous or
     * not (a view, or several arrays coalesced, used to be copied at issue: the earlier result was
     * lost).
     */
    @Test
    void aQueuedCollectiveReadsTheResultOfTheOneBeforeIt() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    if (g.getRank() == 1) {
                        Thread.sleep(300); // rank 0 queues everything behind its barrier
                    }
                    NDArray a = m.ones(new Shape(2));
                    NDArray b = m.ones(new Shape(2));
                    NDArray w = m.ones(new Shape(2, 2));
                    NDArray column = w.get(":, 0");
                    List<Work> works = new ArrayList<>();
                    works.add(g.barrierAsync());
                    works.add(g.allReduceAsync(a, ReduceOp.SUM)); // a = 2
                    works.add(g.allReduceAsync(column, ReduceOp.SUM)); // column = 2
                    works.add(g.allReduceCoalescedAsync(List.of(a, b), ReduceOp.SUM)); // 4, 2
                    works.add(g.allReduceAsync(column, ReduceOp.SUM)); // column = 4
                    NDArray sums = m.zeros(new Shape(2));
                    works.add(g.reduceScatterAsync(sums, List.of(a, b), ReduceOp.SUM)); // 8, 4
                    for (Work work : works) {
                        work.waitFor();
                    }
                    assertArrayEquals(new float[] {4, 4}, a.toFloatArray());
                    assertArrayEquals(new float[] {2, 2}, b.toFloatArray());
                    assertArrayEquals(new float[] {4, 1, 4, 1}, w.toFloatArray());
                    assertArrayEquals(
                            g.getRank() == 0 ? new float[] {8, 8} : new float[] {4, 4},
                            sums.toFloatArray());
                    return null;
                });
    }

    /** A null array or list is refused with an IllegalArgumentException naming the argument. */
    @Test
    void nullArgumentsAreRefusedNamingThem() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    NDArray two = m.zeros(new Shape(2));
                    NDArray four = m.zeros(new Shape(4));
                    assertRefused("output: null", () -> g.allGatherIntoTensor(null, two));
                    assertRefused(
                            "input: null", () -> g.reduceScatterTensor(two, null, ReduceOp.SUM));
                    assertRefused("output: null", () -> g.allToAllSingle(null, four, null, null));
                    assertRefused("inputs: null", () -> g.allToAll(List.of(two, two), null));
                    assertRefused("outputs: null", () -> g.allToAll(null, List.of(two, two)));
                    assertRefused("arrays: null", () -> g.allReduceCoalesced(null, ReduceOp.SUM));
                    return null;
                });
    }

    private static void assertRefused(String start, Runnable call) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, call::run);
        assertTrue(e.getMessage().startsWith(start), e.getMessage());
    }

    @Test
    void aBatchWithABadOperationPostsNone() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    int peer = 1 - g.getRank();
                    NDArray a = m.create(new float[] {g.getRank() + 1f});
                    NDArray b = m.zeros(new Shape(1));
                    IllegalArgumentException e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () ->
                                            g.batchIsendIrecv(
                                                    List.of(
                                                            P2POp.isend(a, peer, 0),
                                                            P2POp.irecv(b, peer, -1))));
                    assertTrue(e.getMessage().startsWith("tag: -1"), e.getMessage());
                    List<P2POp> withNull = new ArrayList<>();
                    withNull.add(P2POp.isend(a, peer, 0));
                    withNull.add(null);
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.batchIsendIrecv(withNull));
                    assertTrue(e.getMessage().startsWith("ops[1]: null"), e.getMessage());
                    // Had the first send gone out, this receive would take its value (1 or 2)
                    // rather than the peer's 10 or 20.
                    NDArray c = m.create(new float[] {(g.getRank() + 1) * 10f});
                    for (Work w :
                            g.batchIsendIrecv(
                                    List.of(P2POp.isend(c, peer, 0), P2POp.irecv(b, peer, 0)))) {
                        w.waitFor();
                    }
                    assertEquals((peer + 1) * 10f, b.getFloat(0));
                    return null;
                });
    }

    /**
     * A payload refused on one rank fails every rank at once, the others naming that rank, rather
     * than leaving them in the collective until the group's timeout; the group stays usable, and
     * List.of is accepted.
     */
    @Test
    void objectCollectivesRefuseMissingPayloadsOnEveryRank() throws Exception {
        MultiRank.run(
                2,
                Duration.ofSeconds(10),
                (g, m) -> {
                    int r = g.getRank();
                    byte[] a = {1, 2, 3};
                    byte[] b = {4};
                    List<byte[]> withNull = new ArrayList<>();
                    withNull.add(a);
                    withNull.add(null);
                    IllegalArgumentException e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.objects().scatter(r == 0 ? withNull : null, 0));
                    assertTrue(
                            e.getMessage()
                                    .startsWith(
                                            r == 0
                                                    ? "payloads[1]: null"
                                                    : "payloads: refused on the source rank 0"),
                            e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.objects().broadcast(null, 1));
                    assertTrue(
                            e.getMessage().startsWith("bytes: null on the source rank 1"),
                            e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.objects().allGather(r == 1 ? null : a));
                    assertTrue(
                            e.getMessage().startsWith("bytes: null on rank(s) [1]"),
                            e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.objects().gather(r == 0 ? null : a, 1));
                    assertTrue(
                            e.getMessage().startsWith("bytes: null on rank(s) [0]"),
                            e.getMessage());
                    byte[] mine = g.objects().scatter(r == 0 ? List.of(a, b) : null, 0);
                    assertArrayEquals(r == 0 ? a : b, mine);
                    return null;
                });
    }

    @Test
    void newGroupWithoutRanksIsTheWholeWorld() throws Exception {
        MultiRank.run(
                3,
                T,
                (g, m) -> {
                    Optional<ProcessGroup> all = g.newGroup();
                    assertTrue(all.isPresent());
                    assertEquals(3, all.get().getSize());
                    assertEquals(g.getRank(), all.get().getRank());
                    NDArray a = m.create(new float[] {g.getRank()});
                    all.get().allReduce(a);
                    assertEquals(3f, a.getFloat(0));
                    all.get().close();
                    return null;
                });
    }

    /**
     * A receive that nothing matches fails the group at the group's timeout, naming the peer, and
     * the peer's next collective fails too: the receive's memory is never written afterwards.
     */
    @Test
    void anUnmatchedReceiveFailsTheGroupAtItsTimeout() throws Exception {
        MultiRank.run(
                2,
                Duration.ofSeconds(2),
                (g, m) -> {
                    NDArray a = m.zeros(new Shape(4));
                    long start = System.nanoTime();
                    if (g.getRank() == 0) {
                        DistributedException e =
                                assertThrows(DistributedException.class, () -> g.recv(a, 1, 7));
                        assertTrue(
                                e.getMessage().contains("recv from rank 1")
                                        && e.getMessage().contains("did not complete within"),
                                e.getMessage());
                        double seconds = (System.nanoTime() - start) / 1e9;
                        assertTrue(seconds >= 1.5 && seconds < 7, seconds + " s");
                    } else {
                        // Rank 1 never sends; past rank 0's timeout, its group has been aborted.
                        Thread.sleep(3000);
                        DistributedException e =
                                assertThrows(DistributedException.class, () -> g.barrier());
                        assertTrue(
                                e.getMessage().contains("did not complete within"), e.getMessage());
                    }
                    return null;
                });
    }

    /**
     * Closing a sub-group waits for its queued collectives (here one that a peer never joins, until
     * the peer closes the sub-group too, or the timeout); meanwhile the world group keeps working.
     * Checked causally: the world's all-reduce runs while the sub-group's close waits, and returns
     * before that close does (the close cannot end before rank 1, which needs the world's
     * all-reduce and barrier first, closes its side, unless the long timeout passes).
     */
    @Test
    void closingASubGroupDoesNotBlockTheWorld() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    ProcessGroup sub = g.newGroup(0, 1).orElseThrow();
                    if (g.getRank() == 0) {
                        Work stuck = sub.allReduceAsync(m.zeros(new Shape(1)), ReduceOp.SUM);
                        CompletableFuture<Void> closed = new CompletableFuture<>();
                        Thread closing =
                                new Thread(
                                        () -> {
                                            try {
                                                sub.close();
                                                closed.complete(null);
                                            } catch (Throwable e) {
                                                closed.completeExceptionally(e);
                                            }
                                        });
                        closing.start();
                        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                        while (!blockedIn(closing, COLLECTIVE_RUNNER, "close")) {
                            assertTrue(
                                    System.nanoTime() < deadline && !closed.isDone(),
                                    "the sub-group's close never waited for its collective");
                            Thread.sleep(5);
                        }
                        NDArray a = m.create(new float[] {1});
                        g.allReduce(a);
                        assertEquals(2f, a.getFloat(0));
                        assertFalse(
                                closed.isDone(),
                                "the world's all-reduce waited for the sub-group's close");
                        g.barrier();
                        closed.get(60, TimeUnit.SECONDS);
                        closing.join(10_000);
                        assertTrue(stuck.isCompleted() && !stuck.isSuccess(), stuck.toString());
                    } else {
                        // Rank 1 keeps the sub-group open, never joining its all-reduce.
                        NDArray a = m.create(new float[] {1});
                        g.allReduce(a);
                        assertEquals(2f, a.getFloat(0));
                        g.barrier();
                        sub.close();
                    }
                    return null;
                });
    }
}
