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

import static ai.djl.distributed.testing.SetupRank.assertFailedPromptlyBecauseOf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.testing.SetupRank;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;

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

    /**
     * Rank 1 is given a transport that does not exist, so it throws before announcing its host key:
     * ranks 0 and 2, waiting for that key, fail at once naming it and its reason, and rank 1 keeps
     * its own error.
     */
    @Test
    void aRankThatFailsBeforeItsHostKeyFailsItsPeersAtOnce() throws Exception {
        try (HashStore store = new HashStore()) {
            SetupRank zero = start(store, 0, Map.of());
            SetupRank failing = start(store, 1, Map.of("transport", "bogus"));
            SetupRank two = start(store, 2, Map.of());

            RuntimeException cause = failing.anyFailure();
            assertTrue(cause instanceof IllegalArgumentException, String.valueOf(cause));
            assertTrue(cause.getMessage().contains("'bogus'"), cause.getMessage());
            for (SetupRank peer : List.of(zero, two)) {
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
            SetupRank zero = start(store, 0, Map.of());
            SetupRank failing = start(store, 1, Map.of());
            long until = System.nanoTime() + TIMEOUT.toNanos();
            while (!(store.check(List.of("host/0", "host/1"))
                    && failing.isWaiting()
                    && zero.isWaiting())) {
                assertTrue(System.nanoTime() < until, "ranks 0 and 1 never waited for rank 2");
                Thread.sleep(5);
            }
            failing.interrupt();
            RuntimeException cause = failing.anyFailure();
            SetupRank two = start(store, 2, Map.of());
            for (SetupRank peer : List.of(zero, two)) {
                assertFailedPromptlyBecauseOf(peer, 1, cause);
            }
        }
    }

    /** One rank's backend set-up on its own thread, which closes the backend should it connect. */
    private static SetupRank start(Store store, int rank, Map<String, String> options) {
        BackendContext context = new BackendContext(store, rank, 3, "cpu", TIMEOUT, options);
        return SetupRank.start(
                "cpu-setup",
                rank,
                TIMEOUT,
                "connected",
                () -> new CpuBackendProvider().create(context));
    }
}
