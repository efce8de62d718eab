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

import static ai.djl.distributed.testing.SetupRank.assertFailedPromptlyBecauseOf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.testing.SetupRank;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

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

    /**
     * Rank 0 gives up after publishing its probe (interrupted while it and rank 1 wait for rank
     * 2's): rank 1, and rank 2 when it comes, both probe every rank and then, waiting for rank 0's
     * verdict, fail at once naming rank 0 and its reason.
     */
    @Test
    void aRankThatFailsAfterPublishingItsProbeFailsItsPeersAtOnce() throws Exception {
        try (HashStore store = new HashStore()) {
            SetupRank failing = start(0, () -> PeerMemory.connect(store, 0, 3, TIMEOUT));
            SetupRank one = start(1, () -> PeerMemory.connect(store, 1, 3, TIMEOUT));
            long until = System.nanoTime() + TIMEOUT.toNanos();
            while (!(store.check(List.of("cma/0", "cma/1"))
                    && failing.isWaiting()
                    && one.isWaiting())) {
                assertTrue(System.nanoTime() < until, "ranks 0 and 1 never waited for rank 2");
                Thread.sleep(5);
            }
            failing.interrupt();
            RuntimeException cause = failing.anyFailure();
            SetupRank two = start(2, () -> PeerMemory.connect(store, 2, 3, TIMEOUT));

            for (SetupRank peer : List.of(one, two)) {
                assertFailedPromptlyBecauseOf(peer, 0, cause);
            }
        }
    }

    /** One rank's probe on its own thread. */
    private static SetupRank start(int rank, Callable<PeerMemory> probe) {
        return SetupRank.start("cma-setup", rank, TIMEOUT, "probed", probe);
    }
}
