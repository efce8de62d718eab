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

import static ai.djl.distributed.pg.MonitoredBarrierTest.assertNoKeysLeft;
import static ai.djl.distributed.pg.MonitoredBarrierTest.reported;
import static ai.djl.distributed.pg.MonitoredBarrierTest.seconds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * {@link ProcessGroup#monitoredBarrier} at its edges: argument checks, a group of one, a destroyed
 * group, an aborted backend, the {@link Distributed} facade, and ranks that meet through a real
 * TCPStore (each its own client, rank 0 serving), whose waits time out on the wire rather than in
 * memory.
 */
@Timeout(120)
class MonitoredBarrierEdgesTest {

    private static final Duration T = Duration.ofSeconds(30);

    @Test
    void badTimeoutsAreRejectedWithoutTakingACallNumber() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    if (g.getRank() == 1) {
                        for (Duration bad :
                                new Duration[] {null, Duration.ZERO, Duration.ofSeconds(-1)}) {
                            IllegalArgumentException e =
                                    assertThrows(
                                            IllegalArgumentException.class,
                                            () -> g.monitoredBarrier(bad, true));
                            assertEquals(
                                    "timeout: " + bad + " (expected: a positive duration)",
                                    e.getMessage());
                        }
                    }
                    // Rank 1's rejected calls took no number: its first real call meets rank 0's.
                    g.monitoredBarrier(Duration.ofSeconds(10), true);
                    return null;
                });
    }

    @Test
    void aGroupOfOnePassesAndADestroyedGroupRefuses() throws Exception {
        MultiRank.run(
                1,
                T,
                (g, m) -> {
                    g.monitoredBarrier(Duration.ofNanos(1), true);
                    g.monitoredBarrier();
                    g.close();
                    IllegalStateException e =
                            assertThrows(IllegalStateException.class, g::monitoredBarrier);
                    assertTrue(e.getMessage().contains("destroyed"), e.getMessage());
                    return null;
                });
    }

    /** A collective that failed aborted the backend, not the store: the barrier still passes. */
    @Test
    void itPassesInAGroupWhoseBackendIsAborted() throws Exception {
        MultiRank.run(
                2,
                T,
                (g, m) -> {
                    NDArray a = m.zeros(new Shape(g.getRank() == 0 ? 10 : 11));
                    assertThrows(CommunicationException.class, () -> g.allReduce(a));
                    g.monitoredBarrier(Duration.ofSeconds(10), true);
                    // It aborted nothing, and revived nothing either.
                    assertThrows(CommunicationException.class, () -> g.allReduce(a));
                    return null;
                });
    }

    @Test
    void theFacadeRunsOnTheWorld(@TempDir Path dir) {
        assertThrows(IllegalStateException.class, Distributed::monitoredBarrier);
        String init = "file://" + dir.resolve("store") + "?rank=0&world_size=1";
        Distributed.initProcessGroup("cpu", init, -1, -1, T);
        try {
            Distributed.monitoredBarrier();
            Distributed.monitoredBarrier(Duration.ofSeconds(1), true);
            assertThrows(
                    IllegalArgumentException.class,
                    () -> Distributed.monitoredBarrier(Duration.ZERO, false));
        } finally {
            Distributed.destroyProcessGroup();
        }
    }

    /**
     * Three ranks on a TCPStore: rank 2 misses call 0 and comes once rank 0 has judged, failing on
     * the verdict; then 20 calls pass, and no key is left on the server.
     */
    @Test
    void ranksMeetThroughATcpStore() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        String verdict =
                "[Rank 0]: Rank 2 failed to pass monitoredBarrier in 1000 ms (group 0, call 0)";
        CountDownLatch judged = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(3);
        try {
            List<Future<?>> ranks = new ArrayList<>();
            for (int rank = 0; rank < 3; rank++) {
                int r = rank;
                String init = "tcp://127.0.0.1:" + port + "?rank=" + r + "&world_size=3";
                ranks.add(
                        pool.submit(
                                () -> {
                                    try (ProcessGroup g =
                                            ProcessGroups.init("cpu", init, -1, -1, T)) {
                                        tcpRank(g, verdict, judged);
                                    }
                                    return null;
                                }));
            }
            for (Future<?> f : ranks) {
                f.get(90, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
            assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS), "rank threads did not stop");
        }
    }

    private static void tcpRank(ProcessGroup g, String verdict, CountDownLatch judged)
            throws InterruptedException {
        int r = g.getRank();
        g.barrier(); // ranks 0 and 1 arrive together
        if (r == 2) {
            assertTrue(judged.await(30, TimeUnit.SECONDS), "rank 0 never judged");
        }
        long start = System.nanoTime();
        CommunicationException e =
                assertThrows(
                        CommunicationException.class,
                        () -> g.monitoredBarrier(Duration.ofSeconds(1), false));
        double s = seconds(start);
        if (r == 0) {
            judged.countDown();
            assertEquals(verdict, e.getMessage());
            assertTrue(s > 0.9 && s < 8, "rank 0 failed after " + s + " s");
        } else {
            assertEquals(reported(r, verdict), e.getMessage());
            assertTrue(s < 8, "rank " + r + " failed after " + s + " s");
        }
        for (int i = 0; i < 20; i++) {
            g.monitoredBarrier(T, true);
        }
        g.barrier();
        if (r == 0) {
            assertNoKeysLeft(g.store(), "0", 21, 3);
        }
        g.barrier(); // no rank closes the store under the others
    }
}
