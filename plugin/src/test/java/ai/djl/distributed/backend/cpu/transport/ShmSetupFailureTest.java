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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.testing.SetupRank;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * A rank whose shared-memory set-up fails, and which stays alive, fails its peers' set-up at once
 * with its reason, whether it failed before announcing its segments or after its peers had mapped
 * them; none waits out the group's timeout. Three ranks of one process on one store, each on its
 * own thread; the failures are real ones, caused by interrupting the failing rank's thread.
 */
@Timeout(120)
class ShmSetupFailureTest {

    // Long enough that a peer waiting it out is told apart from one failing at once.
    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    /**
     * Rank 2 cannot create its segments (its thread is interrupted, so growing the memfd through a
     * FileChannel fails): ranks 0 and 1, waiting for its announcement, fail at once naming it.
     */
    @Test
    void aRankThatCannotCreateItsSegmentsFailsItsPeersAtOnce() throws Exception {
        Set<String> before = devShm();
        try (HashStore store = new HashStore()) {
            SetupRank failing =
                    start(
                            2,
                            () -> {
                                Thread.currentThread().interrupt();
                                return ShmTransport.connect(store, 2, 3, TIMEOUT);
                            });
            SetupRank zero = start(0, () -> ShmTransport.connect(store, 0, 3, TIMEOUT));
            SetupRank one = start(1, () -> ShmTransport.connect(store, 1, 3, TIMEOUT));

            CommunicationException cause = failing.failure();
            assertTrue(cause.getMessage().contains("rank 2 cannot create"), cause.getMessage());
            for (SetupRank peer : List.of(zero, one)) {
                assertFailedPromptlyBecauseOf(peer, 2, cause);
            }
        }
        assertEquals(before, devShm(), "the project's files in /dev/shm changed");
    }

    /**
     * Rank 0 gives up after rank 1 has mapped its segments (interrupted while both wait for rank
     * 2's announcement): rank 1, waiting for every rank to have mapped, and rank 2, which finds
     * rank 0's segments gone, both fail at once naming rank 0 and its reason.
     */
    @Test
    void aRankThatFailsAfterItsPeersMappedItsSegmentsFailsThemAtOnce() throws Exception {
        Set<String> before = devShm();
        try (HashStore store = new HashStore()) {
            SetupRank failing = start(0, () -> ShmTransport.connect(store, 0, 3, TIMEOUT));
            SetupRank one = start(1, () -> ShmTransport.connect(store, 1, 3, TIMEOUT));
            // Both announced, mapped each other's segments, and now wait for rank 2's.
            long until = System.nanoTime() + TIMEOUT.toNanos();
            while (!(store.check(List.of("shm/0", "shm/1"))
                    && failing.isWaiting()
                    && one.isWaiting())) {
                assertTrue(System.nanoTime() < until, "ranks 0 and 1 never waited for rank 2");
                Thread.sleep(5);
            }
            failing.interrupt();
            RuntimeException cause = failing.anyFailure();
            SetupRank two = start(2, () -> ShmTransport.connect(store, 2, 3, TIMEOUT));

            for (SetupRank peer : List.of(one, two)) {
                assertFailedPromptlyBecauseOf(peer, 0, cause);
            }
        }
        assertEquals(before, devShm(), "the project's files in /dev/shm changed");
    }

    /**
     * The project's files in {@code /dev/shm} (every segment is named {@code djl-dist-...}, as
     * e2e's SharedMemoryFiles lists them): other programs' files come and go.
     */
    private static Set<String> devShm() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("/dev/shm"))) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("djl-dist"))
                    .collect(Collectors.toSet());
        }
    }

    /** One rank's set-up on its own thread, which closes the transport should it connect. */
    private static SetupRank start(int rank, Callable<Transport> connect) {
        return SetupRank.start("shm-setup", rank, TIMEOUT, "connected", connect);
    }
}
