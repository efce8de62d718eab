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

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;

/**
 * A failure that one transport of a rank finds fails the collectives waiting on its other transport
 * at once, with its cause. Under {@code auto} a rank has two (TCP for small messages, shared memory
 * for large ones): a mismatch the shared-memory half sees must not leave a collective waiting on a
 * TCP receive until the group's timeout, blaming a peer that is alive. Two ranks of one process;
 * {@code tcp} and {@code shm} run the same scenario for comparison.
 */
@Timeout(300)
class AutoTransportFailureTest {

    // Far longer than a prompt failure takes even on a slow, shared host: a rank that waits it
    // out is told apart from one that fails at once.
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final long PROMPT_MS = 20_000;

    /**
     * Rank 0 calls a small gather (its receive from rank 1 goes over TCP); rank 1 skipped it and
     * calls an all-to-all whose message to rank 0 is over 64 KiB (over shared memory). Rank 0's
     * shared-memory link finds the mismatch; both ranks fail at once, naming both calls.
     */
    @ParameterizedTest
    @ValueSource(strings = {"auto", "tcp", "shm"})
    void aMismatchOneTransportFindsFailsTheOthersWaitersAtOnce(String transport) throws Exception {
        MultiRank.run(
                2,
                transport,
                TIMEOUT,
                (g, m) -> {
                    long start = System.nanoTime();
                    CommunicationException e =
                            assertThrows(
                                    CommunicationException.class,
                                    () -> {
                                        if (g.getRank() == 0) {
                                            NDArray in = m.zeros(new Shape(10));
                                            g.gather(
                                                    in,
                                                    List.of(
                                                            m.zeros(new Shape(10)),
                                                            m.zeros(new Shape(10))),
                                                    0);
                                        } else {
                                            // 80,000 bytes to rank 0: past HybridTransport's
                                            // SMALL_BYTES.
                                            g.allToAll(
                                                    List.of(
                                                            m.zeros(new Shape(10)),
                                                            m.zeros(new Shape(10))),
                                                    List.of(
                                                            m.zeros(new Shape(20_000)),
                                                            m.zeros(new Shape(10))));
                                        }
                                    });
                    long ms = (System.nanoTime() - start) / 1_000_000;
                    String msg = e.getMessage();
                    assertTrue(
                            ms < PROMPT_MS,
                            "rank " + g.getRank() + " failed after " + ms + " ms: " + msg);
                    assertTrue(msg.contains("mismatch"), msg);
                    assertTrue(msg.contains("GATHER") && msg.contains("ALL_TO_ALL"), msg);
                    return null;
                });
    }
}
