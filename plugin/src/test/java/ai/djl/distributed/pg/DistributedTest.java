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
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The one world per process of {@link Distributed}: while one thread waits in {@link
 * Distributed#initProcessGroup} for a peer, the other methods answer at once, and a destroy cancels
 * the initialisation rather than waiting for it (a shutdown hook's case).
 */
@Timeout(120)
class DistributedTest {

    // Long enough that a method waiting for the rendezvous shows, far beyond PROMPT.
    private static final Duration RENDEZVOUS = Duration.ofSeconds(60);
    // Generous for a loaded machine; the methods themselves answer in microseconds.
    private static final long PROMPT_SECONDS = 5;

    private final ExecutorService threads = Executors.newCachedThreadPool();

    @AfterEach
    void tearDown() throws Exception {
        Distributed.destroyProcessGroup();
        threads.shutdownNow();
        assertTrue(threads.awaitTermination(60, TimeUnit.SECONDS), "a test thread still runs");
    }

    private static ProcessGroups.Builder rank(HashStore store, int rank) {
        return ProcessGroups.builder()
                .setBackend("cpu")
                .optStore(store)
                .optRank(rank)
                .optWorldSize(2)
                .optTimeout(RENDEZVOUS);
    }

    private static <T> T prompt(Future<T> answer) throws Exception {
        return answer.get(PROMPT_SECONDS, TimeUnit.SECONDS);
    }

    // Rank 0 of 2 in the world's rendezvous, on a thread of its own; returns once it waits there.
    private Future<ProcessGroup> initWaitingForRank1(HashStore store) throws Exception {
        Future<ProcessGroup> init =
                threads.submit(() -> Distributed.initProcessGroup(rank(store, 0)));
        long deadline = System.nanoTime() + RENDEZVOUS.toNanos();
        while (store.numKeys() == 0) {
            assertFalse(init.isDone(), "initProcessGroup returned without rank 1");
            assertTrue(System.nanoTime() < deadline, "rank 0 never reached the rendezvous");
            Thread.sleep(10);
        }
        return init;
    }

    @Test
    void theReadersAnswerWhileAnotherThreadWaitsInInit() throws Exception {
        HashStore store = new HashStore();
        Future<ProcessGroup> init = initWaitingForRank1(store);
        assertFalse(prompt(threads.submit(Distributed::isInitialized)));
        Future<String> worldGroup =
                threads.submit(
                        () ->
                                assertThrows(
                                                IllegalStateException.class,
                                                Distributed::getWorldGroup)
                                        .getMessage());
        assertTrue(prompt(worldGroup).contains("has not been initialised"));
        Future<String> second =
                threads.submit(
                        () ->
                                assertThrows(
                                                IllegalStateException.class,
                                                () -> Distributed.initProcessGroup(rank(store, 0)))
                                        .getMessage());
        assertTrue(
                prompt(second).contains("(expected: one initProcessGroup at a time)"),
                "a second init must fail, not wait");

        // rank 1 comes: the world is rank 0's
        try (ProcessGroup peer = rank(store, 1).build()) {
            assertEquals(1, peer.getRank());
            ProcessGroup world = prompt(init);
            assertTrue(Distributed.isInitialized());
            assertEquals(0, Distributed.getRank());
            assertEquals(2, Distributed.getWorldSize());
            assertSame(world, Distributed.getWorldGroup());
            Distributed.destroyProcessGroup();
            assertFalse(Distributed.isInitialized());
        }
    }

    @Test
    void aDestroyDuringInitReturnsAtOnceAndTheWorldItBuildsIsClosed() throws Exception {
        HashStore store = new HashStore();
        Future<ProcessGroup> init = initWaitingForRank1(store);
        // as a shutdown hook would, while main waits in the rendezvous
        prompt(threads.submit(() -> Distributed.destroyProcessGroup()));
        ProcessGroup peer = null;
        try {
            // rank 1 comes, and rank 0's build completes: no live world may stay behind
            peer = rank(store, 1).build();
        } catch (RuntimeException e) {
            // rank 0 closes its group as soon as it is built, which rank 1 may see
        } finally {
            if (peer != null) {
                peer.close();
            }
        }
        ExecutionException e =
                assertThrows(
                        ExecutionException.class,
                        () -> init.get(RENDEZVOUS.toSeconds(), TimeUnit.SECONDS));
        assertTrue(e.getCause() instanceof IllegalStateException, e::toString);
        assertTrue(
                e.getCause().getMessage().startsWith("destroyProcessGroup ran while"),
                e.getCause().getMessage());
        assertFalse(Distributed.isInitialized());
    }
}
