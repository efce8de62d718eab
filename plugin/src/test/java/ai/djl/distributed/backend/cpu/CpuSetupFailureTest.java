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
package ai.djl.distributed.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.store.Store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * A rank whose CPU backend set-up fails, and which stays alive, fails its peers' set-up at once
 * with its reason; none waits out the group's timeout. Three ranks of one process on one real
 * {@link HashStore}, each creating the backend through {@link CpuBackendProvider} on its own
 * thread.
 */
@Timeout(120)
class CpuSetupFailureTest {

    // Long enough that a peer waiting it out is told apart from one failing at once.
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final long PROMPT_MS = 5_000;

    /**
     * Rank 1 is given a transport that does not exist, so it throws before announcing its host key:
     * ranks 0 and 2, waiting for that key, fail at once naming it and its reason, and rank 1 keeps
     * its own error.
     */
    @Test
    void aRankThatFailsBeforeItsHostKeyFailsItsPeersAtOnce() throws Exception {
        try (HashStore store = new HashStore()) {
            Rank zero = Rank.start(store, 0, Map.of());
            Rank failing = Rank.start(store, 1, Map.of("transport", "bogus"));
            Rank two = Rank.start(store, 2, Map.of());

            RuntimeException cause = failing.anyFailure();
            assertTrue(cause instanceof IllegalArgumentException, String.valueOf(cause));
            assertTrue(cause.getMessage().contains("'bogus'"), cause.getMessage());
            for (Rank peer : List.of(zero, two)) {
                assertFailedPromptlyBecauseOf(peer, 1, cause);
            }
        }
    }

    /**
     * Rank 1 announces its host key, then fails while it waits for rank 2's (its thread is
     * interrupted): ranks 0 and 2, which then have every host key, must not go on to wait for rank
     * 1 in the transport's set-up until their timeout, but fail at once naming it.
     */
    @Test
    void aRankThatFailsAfterItsHostKeyFailsItsPeersAtOnce() throws Exception {
        try (HashStore store = new HashStore()) {
            Rank zero = Rank.start(store, 0, Map.of());
            Rank failing = Rank.start(store, 1, Map.of());
            long until = System.nanoTime() + TIMEOUT.toNanos();
            while (!(store.check(List.of("host/0", "host/1"))
                    && failing.thread.getState() == Thread.State.TIMED_WAITING
                    && zero.thread.getState() == Thread.State.TIMED_WAITING)) {
                assertTrue(System.nanoTime() < until, "ranks 0 and 1 never waited for rank 2");
                Thread.sleep(5);
            }
            failing.thread.interrupt();
            RuntimeException cause = failing.anyFailure();
            Rank two = Rank.start(store, 2, Map.of());
            for (Rank peer : List.of(zero, two)) {
                assertFailedPromptlyBecauseOf(peer, 1, cause);
            }
        }
    }

    static void assertFailedPromptlyBecauseOf(Rank peer, int culprit, RuntimeException cause)
            throws Exception {
        RuntimeException any = peer.anyFailure();
        long ms = peer.elapsedMs();
        assertTrue(
                ms < PROMPT_MS,
                "rank " + peer.rank + " failed after " + ms + " ms, not at once: " + any);
        if (!(any instanceof CommunicationException e)) {
            throw new AssertionError("rank " + peer.rank + " failed otherwise", any);
        }
        assertEquals(culprit, e.getPeerRank(), e.getMessage());
        assertTrue(e.getMessage().contains("rank " + culprit), e.getMessage());
        assertTrue(
                e.getMessage().contains(cause.getMessage()),
                "rank " + peer.rank + " does not give rank " + culprit + "'s reason: " + e);
    }

    /** One rank's backend set-up on its own thread, which closes the backend should it connect. */
    static final class Rank {

        final int rank;
        final Thread thread;
        final CompletableFuture<Void> done = new CompletableFuture<>();
        final long start = System.nanoTime();
        volatile long end;

        private Rank(Store store, int rank, Map<String, String> options) {
            this.rank = rank;
            BackendContext context = new BackendContext(store, rank, 3, "cpu", TIMEOUT, options);
            this.thread =
                    new Thread(
                            () -> {
                                try {
                                    Backend b = new CpuBackendProvider().create(context);
                                    end = System.nanoTime();
                                    b.close();
                                    done.complete(null);
                                } catch (Throwable e) {
                                    end = System.nanoTime();
                                    done.completeExceptionally(e);
                                }
                            },
                            "cpu-setup-rank-" + rank);
            thread.setDaemon(true);
        }

        static Rank start(Store store, int rank, Map<String, String> options) {
            Rank r = new Rank(store, rank, options);
            r.thread.start();
            return r;
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
            return fail("rank " + rank + " connected");
        }

        long elapsedMs() {
            return (end - start) / 1_000_000;
        }
    }
}
