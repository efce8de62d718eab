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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Point-to-point, object collectives, sub-groups, the device mesh, Work and argument checks. */
@Timeout(120)
class ProcessGroupTest {

    private static final Duration T = Duration.ofSeconds(30);

    @Test
    void sendRecvAroundARingAndBothWaysAtOnce() throws Exception {
        MultiRank.run(
                3,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    int p = g.getSize();
                    // Large messages both ways at once: neither isend waits for the other's irecv.
                    NDArray out = m.arange(0f, 500_000f).add(r);
                    NDArray in = m.zeros(new Shape(500_000));
                    int right = (r + 1) % p;
                    int left = (r + p - 1) % p;
                    Work s = g.isend(out, right, 7);
                    Work rv = g.irecv(in, left, 7);
                    s.waitFor();
                    rv.waitFor();
                    assertTrue(rv.isCompleted() && rv.isSuccess() && rv.getException() == null);
                    assertArrayEquals(
                            m.arange(0f, 500_000f).add(left).toFloatArray(), in.toFloatArray());
                    // Tags pair sends with receives whatever the order they are posted in.
                    if (r == 0) {
                        g.send(m.create(new int[] {1}), 1, 1);
                        g.send(m.create(new int[] {2}), 1, 2);
                    } else if (r == 1) {
                        NDArray two = m.zeros(new Shape(1), DataType.INT32);
                        NDArray one = m.zeros(new Shape(1), DataType.INT32);
                        Work w2 = g.irecv(two, 0, 2);
                        g.recv(one, 0, 1);
                        w2.waitFor();
                        assertEquals(1, one.getInt(0));
                        assertEquals(2, two.getInt(0));
                    }
                    // batchIsendIrecv: exchange with both neighbours.
                    NDArray fromLeft = m.zeros(new Shape(2), DataType.INT64);
                    NDArray fromRight = m.zeros(new Shape(2), DataType.INT64);
                    List<Work> works =
                            g.batchIsendIrecv(
                                    List.of(
                                            P2POp.isend(m.create(new long[] {r, 10}), right, 0),
                                            P2POp.isend(m.create(new long[] {r, 20}), left, 0),
                                            P2POp.irecv(fromLeft, left, 0),
                                            P2POp.irecv(fromRight, right, 0)));
                    works.forEach(Work::waitFor);
                    assertArrayEquals(new long[] {left, 10}, fromLeft.toLongArray());
                    assertArrayEquals(new long[] {right, 20}, fromRight.toLongArray());
                    return null;
                });
    }

    /**
     * A receive's future may post to the group from its callback, on whatever thread completed it
     * (the I/O thread, or a posting thread that found the message already there): relays run both
     * ways around the ring, every hop posted from the previous hop's callback, and every message
     * comes back to rank 0 intact. (Callbacks run outside every link's lock; the deadlock that
     * completing transfers under it would allow needs an interleaving this test does not force.)
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void aReceiveCallbackMayPostToTheGroup(String transport) throws Exception {
        int k = 100;
        MultiRank.run(
                3,
                transport,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    int p = g.getSize();
                    int right = (r + 1) % p;
                    int left = (r + p - 1) % p;
                    NDArray[] in = new NDArray[2 * k];
                    List<Work> recvs = new ArrayList<>();
                    List<Work> forwards = new CopyOnWriteArrayList<>();
                    CountDownLatch forwarded = new CountDownLatch(r == 0 ? 0 : 2 * k);
                    for (int tag = 0; tag < 2 * k; tag++) {
                        // Tags below k travel rightwards, the others leftwards.
                        int from = tag < k ? left : right;
                        int to = tag < k ? right : left;
                        int t = tag;
                        in[t] = m.zeros(new Shape(4), DataType.INT32);
                        Work w = g.irecv(in[t], from, t);
                        recvs.add(w);
                        if (r != 0) {
                            w.getFuture()
                                    .thenRun(
                                            () -> {
                                                forwards.add(g.isend(in[t], to, t));
                                                forwarded.countDown();
                                            });
                        }
                    }
                    if (r == 0) {
                        for (int tag = 0; tag < 2 * k; tag++) {
                            int[] payload = {tag, tag * 7, -tag, 42};
                            forwards.add(g.isend(m.create(payload), tag < k ? right : left, tag));
                        }
                    }
                    recvs.forEach(Work::waitFor);
                    assertTrue(forwarded.await(30, TimeUnit.SECONDS), "callbacks did not all run");
                    forwards.forEach(Work::waitFor);
                    if (r == 0) {
                        for (int tag = 0; tag < 2 * k; tag++) {
                            assertArrayEquals(
                                    new int[] {tag, tag * 7, -tag, 42}, in[tag].toIntArray());
                        }
                    }
                    return null;
                });
    }

    @Test
    void aSendAfterAnAsyncCollectiveIsNotStuckBehindIt() throws Exception {
        for (String transport : new String[] {"tcp", "shm"}) {
            MultiRank.run(
                    2,
                    transport,
                    T,
                    (g, m) -> {
                        NDArray big = m.ones(new Shape(1_000_000));
                        NDArray small = m.zeros(new Shape(3));
                        if (g.getRank() == 0) {
                            Work w = g.allReduceAsync(big, ReduceOp.SUM);
                            g.send(m.create(new float[] {1, 2, 3}), 1, 5);
                            w.waitFor();
                        } else {
                            // Rank 1 needs the message before it joins the collective.
                            Thread.sleep(200);
                            g.recv(small, 0, 5);
                            g.allReduce(big);
                        }
                        assertEquals(2f, big.getFloat(999_999));
                        if (g.getRank() == 1) {
                            assertArrayEquals(new float[] {1, 2, 3}, small.toFloatArray());
                        }
                        return null;
                    });
        }
    }

    @Test
    void blockingCollectivesStayBehindQueuedOnes() throws Exception {
        MultiRank.run(
                3,
                T,
                (g, m) -> {
                    // A blocking call may run on the caller's thread, but only when nothing is
                    // queued: here it must wait for the asynchronous ones issued before it.
                    List<NDArray> arrays = new ArrayList<>();
                    List<Work> works = new ArrayList<>();
                    for (int i = 0; i < 5; i++) {
                        NDArray a = m.ones(new Shape(200_000)).mul(i + g.getRank());
                        arrays.add(a);
                        works.add(g.allReduceAsync(a, ReduceOp.SUM));
                    }
                    NDArray last = m.create(new float[] {g.getRank()});
                    g.allReduce(last);
                    assertEquals(3f, last.getFloat(0));
                    for (int i = 0; i < 5; i++) {
                        works.get(i).waitFor();
                        assertEquals(3f * i + 3f, arrays.get(i).getFloat(199_999));
                    }
                    return null;
                });
    }

    @Test
    void aMessageSentBeforeAGoodbyeIsStillDelivered() throws Exception {
        // Rank 0 sends, then destroys its group at once; rank 1 posts its receive only later,
        // after the goodbye has arrived.
        for (String transport : new String[] {"tcp", "shm"}) {
            java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
            ai.djl.distributed.store.HashStore store = new ai.djl.distributed.store.HashStore();
            try {
                Thread sender =
                        new Thread(
                                () -> {
                                    try (ProcessGroup g = group(store, 0, transport);
                                            ai.djl.ndarray.NDManager m =
                                                    ai.djl.ndarray.NDManager.newBaseManager()) {
                                        g.send(m.create(new int[] {42}), 1, 0);
                                    } finally {
                                        closed.countDown();
                                    }
                                });
                sender.start();
                try (ProcessGroup g = group(store, 1, transport);
                        ai.djl.ndarray.NDManager m = ai.djl.ndarray.NDManager.newBaseManager()) {
                    assertTrue(closed.await(30, java.util.concurrent.TimeUnit.SECONDS));
                    Thread.sleep(200); // let the goodbye arrive
                    NDArray got = m.zeros(new Shape(1), DataType.INT32);
                    g.recv(got, 0, 0);
                    assertEquals(42, got.getInt(0));
                }
                sender.join();
            } finally {
                store.close();
            }
        }
    }

    private static ProcessGroup group(
            ai.djl.distributed.store.Store store, int rank, String transport) {
        return ProcessGroups.builder()
                .setBackend("cpu")
                .optStore(store)
                .optRank(rank)
                .optWorldSize(2)
                .optTimeout(T)
                .optBackendOption("cpu", "transport", transport)
                .build();
    }

    @Test
    void objectCollectives() throws Exception {
        MultiRank.run(
                3,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    byte[] mine =
                            ("rank-" + r + "-" + "x".repeat(r * 5))
                                    .getBytes(StandardCharsets.UTF_8);
                    ObjectCollectives o = g.objects();
                    assertEquals("rank-1-xxxxx", str(o.broadcast(r == 1 ? mine : null, 1)));
                    List<byte[]> all = o.allGather(mine);
                    for (int j = 0; j < 3; j++) {
                        assertEquals("rank-" + j + "-" + "x".repeat(j * 5), str(all.get(j)));
                    }
                    List<byte[]> gathered = o.gather(mine, 2);
                    if (r == 2) {
                        assertEquals("rank-0-", str(gathered.get(0)));
                    } else {
                        assertEquals(null, gathered);
                    }
                    List<byte[]> parts = new ArrayList<>();
                    for (int j = 0; j < 3; j++) {
                        parts.add(("for " + j).repeat(j + 1).getBytes(StandardCharsets.UTF_8));
                    }
                    assertEquals(
                            ("for " + r).repeat(r + 1), str(o.scatter(r == 0 ? parts : null, 0)));
                    return null;
                });
    }

    @Test
    void subGroupsAndDeviceMesh() throws Exception {
        MultiRank.run(
                4,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    Optional<ProcessGroup> odd = g.newGroup(3, 1);
                    assertEquals(r % 2 == 1, odd.isPresent());
                    if (odd.isPresent()) {
                        ProcessGroup sub = odd.get();
                        assertEquals(r / 2, sub.getRank());
                        assertEquals(r, sub.getGlobalRank(sub.getRank()));
                        NDArray a = m.create(new float[] {r});
                        sub.allReduce(a);
                        assertEquals(4f, a.getFloat(0));
                        sub.close();
                    }
                    try (DeviceMesh mesh = DeviceMesh.create(g, 2, 2)) {
                        assertArrayEquals(new int[] {r / 2, r % 2}, mesh.getCoordinate());
                        NDArray rowSum = m.create(new float[] {r});
                        mesh.getGroup(1).allReduce(rowSum);
                        NDArray colSum = m.create(new float[] {r});
                        mesh.getGroup(0).allReduce(colSum);
                        int row = r / 2;
                        int col = r % 2;
                        assertEquals(row * 2 + row * 2 + 1, (int) rowSum.getFloat(0));
                        assertEquals(col + col + 2, (int) colSum.getFloat(0));
                    }
                    g.barrier();
                    return null;
                });
    }

    /**
     * A mesh is laid over the world: a sub-group's members alone cannot make one (every world rank
     * must call newGroup, and the mesh's ranks would be read as world ranks), so it is refused
     * rather than handing its members a mesh without groups.
     */
    @Test
    void aDeviceMeshOverASubGroupIsRefused() throws Exception {
        MultiRank.run(
                4,
                T,
                (g, m) -> {
                    int r = g.getRank();
                    Optional<ProcessGroup> upper = g.newGroup(2, 3);
                    if (upper.isPresent()) {
                        IllegalArgumentException e =
                                assertThrows(
                                        IllegalArgumentException.class,
                                        () -> DeviceMesh.create(upper.get(), 1, 2));
                        assertTrue(e.getMessage().contains("world group"), e.getMessage());
                    }
                    // A group of every world rank, in world order, lays out as the world does.
                    ProcessGroup all = g.newGroup().orElseThrow();
                    try (DeviceMesh mesh = DeviceMesh.create(all, 2, 2)) {
                        NDArray rowSum = m.create(new float[] {r});
                        mesh.getGroup(1).allReduce(rowSum);
                        assertEquals((r / 2) * 4 + 1, (int) rowSum.getFloat(0));
                    }
                    return null;
                });
    }

    @Test
    void badArgumentsAreRejectedBeforeAnythingIsSent() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    NDArray f = m.zeros(new Shape(4));
                    IllegalArgumentException e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.allReduce(f, ReduceOp.BAND));
                    assertTrue(
                            e.getMessage().contains("BAND") && e.getMessage().contains("float32"),
                            e.getMessage());
                    NDArray i = m.zeros(new Shape(4), DataType.INT32);
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.allReduce(i, ReduceOp.AVG));
                    assertTrue(e.getMessage().contains("AVG"), e.getMessage());
                    e = assertThrows(IllegalArgumentException.class, () -> g.broadcast(f, 2));
                    assertTrue(e.getMessage().startsWith("src: 2"), e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.allGather(List.of(f), f));
                    assertTrue(e.getMessage().contains("outputs: 1 arrays"), e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.allGather(List.of(f, m.zeros(new Shape(5))), f));
                    assertTrue(e.getMessage().contains("outputs[1]"), e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.send(f, g.getRank(), 0));
                    assertTrue(e.getMessage().contains("another rank"), e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.send(f, 1 - g.getRank(), -1));
                    assertTrue(e.getMessage().startsWith("tag: -1"), e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.allToAllSingle(f, f, new long[] {1, 1}, null));
                    assertTrue(e.getMessage().contains("splits"), e.getMessage());
                    // A closed array still reports its type and shape; it is refused here rather
                    // than failing inside the backend, which would abort the group.
                    NDArray closed = m.create(new float[] {1, 2});
                    closed.getShape();
                    closed.close();
                    e = assertThrows(IllegalArgumentException.class, () -> g.allReduce(closed));
                    assertTrue(
                            e.getMessage().startsWith("array: a closed NDArray"), e.getMessage());
                    e =
                            assertThrows(
                                    IllegalArgumentException.class,
                                    () -> g.allGather(List.of(f, f), closed));
                    assertTrue(e.getMessage().contains("closed"), e.getMessage());
                    // The group is still usable: nothing was sent.
                    NDArray ok = m.create(new float[] {1});
                    g.allReduce(ok);
                    assertEquals(2f, ok.getFloat(0));
                    return null;
                });
    }

    private static String str(byte[] b) {
        return new String(b, StandardCharsets.UTF_8);
    }
}
