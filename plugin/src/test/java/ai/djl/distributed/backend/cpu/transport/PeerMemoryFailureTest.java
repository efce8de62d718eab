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
package ai.djl.distributed.backend.cpu.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A rank whose peer-memory probe fails, and which stays alive, fails its peers' probe at once with
 * its reason; none waits out the group's timeout. Three ranks of one process on one real {@link
 * HashStore}, each on its own thread; the failure is a real one, caused by interrupting the failing
 * rank's thread while it waits in the store.
 */
@Timeout(120)
class PeerMemoryFailureTest {

    // Long enough that a peer waiting it out is told apart from one failing at once.
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final long PROMPT_MS = 5_000;

    /**
     * Rank 0 gives up after publishing its probe (interrupted while it and rank 1 wait for rank
     * 2's): rank 1, and rank 2 when it comes, both probe every rank and then, waiting for rank 0's
     * verdict, fail at once naming rank 0 and its reason.
     */
    @Test
    void aRankThatFailsAfterPublishingItsProbeFailsItsPeersAtOnce() throws Exception {
        try (HashStore store = new HashStore()) {
            Rank failing = Rank.start(0, () -> PeerMemory.connect(store, 0, 3, TIMEOUT));
            Rank one = Rank.start(1, () -> PeerMemory.connect(store, 1, 3, TIMEOUT));
            long until = System.nanoTime() + TIMEOUT.toNanos();
            while (!(store.check(List.of("cma/0", "cma/1"))
                    && failing.isWaiting()
                    && one.isWaiting())) {
                assertTrue(System.nanoTime() < until, "ranks 0 and 1 never waited for rank 2");
                Thread.sleep(5);
            }
            failing.thread.interrupt();
            RuntimeException cause = failing.anyFailure();
            Rank two = Rank.start(2, () -> PeerMemory.connect(store, 2, 3, TIMEOUT));

            for (Rank peer : List.of(one, two)) {
                CommunicationException e = peer.failure();
                long ms = peer.elapsedMs();
                assertTrue(
                        ms < PROMPT_MS,
                        "rank " + peer.rank + " failed after " + ms + " ms, not at once: " + e);
                assertEquals(0, e.getPeerRank(), e.getMessage());
                assertTrue(e.getMessage().contains("rank 0"), e.getMessage());
                assertTrue(
                        e.getMessage().contains(cause.getMessage()),
                        "rank " + peer.rank + " does not give rank 0's reason: " + e);
            }
        }
    }

    /** One rank's probe on its own thread. */
    private static final class Rank {

        final int rank;
        final Thread thread;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final long start = System.nanoTime();
        volatile long end;

        private Rank(int rank, Probe probe) {
            this.rank = rank;
            this.thread =
                    new Thread(
                            () -> {
                                try {
                                    probe.run();
                                    end = System.nanoTime();
                                    done.complete(null);
                                } catch (Throwable e) {
                                    end = System.nanoTime();
                                    done.completeExceptionally(e);
                                }
                            },
                            "cma-setup-rank-" + rank);
            thread.setDaemon(true);
        }

        static Rank start(int rank, Probe probe) {
            Rank r = new Rank(rank, probe);
            r.thread.start();
            return r;
        }

        /** Whether the rank is blocked in a timed wait (the store's, once it has published). */
        boolean isWaiting() {
            return thread.getState() == Thread.State.TIMED_WAITING;
        }

        /** The rank's failure, which must be a {@link CommunicationException}. */
        CommunicationException failure() throws Exception {
            RuntimeException e = anyFailure();
            if (e instanceof CommunicationException ce) {
                return ce;
            }
            throw new AssertionError("rank " + rank + " failed otherwise", e);
        }

        /** The rank's failure, of whatever kind. */
        RuntimeException anyFailure() throws Exception {
            try {
                done.get(TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof RuntimeException re) {
                    return re;
                }
                throw new AssertionError("rank " + rank + " failed otherwise", e.getCause());
            }
            return fail("rank " + rank + " probed");
        }

        long elapsedMs() {
            return (end - start) / 1_000_000;
        }
    }

    /** A rank's probe. */
    private interface Probe {
        PeerMemory run();
    }
}
