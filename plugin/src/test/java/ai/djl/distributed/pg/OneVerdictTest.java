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
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * One verdict per collective on the shared-memory board: a rank that arrives after its peer gave up
 * on a small all-reduce fails it too, instead of completing it with the data the peer posted before
 * it gave up; and ranks that arrive around the deadline agree, whichever way it goes.
 */
@Timeout(120)
class OneVerdictTest {

    // Short, so that rank 1 can be late; long enough for the group's set-up on a busy machine.
    private static final Duration TIMEOUT = Duration.ofMillis(1500);

    /** Runs one small all-reduce with rank 1 late by {@code lateMs}; the verdict of each rank. */
    private static List<String> verdicts(String transport, long lateMs) throws Exception {
        return MultiRank.run(
                2,
                transport,
                TIMEOUT,
                Duration.ofSeconds(30),
                (g, m) -> {
                    NDArray a = m.ones(new Shape(16));
                    g.allReduce(a); // both ranks are up: the next one is the one that races
                    if (g.getRank() == 1) {
                        Thread.sleep(lateMs);
                    }
                    String verdict;
                    try {
                        g.allReduce(a);
                        verdict = "ok " + a.getFloat(0);
                    } catch (CommunicationException e) {
                        verdict = "failed: " + e.getMessage();
                    }
                    if (g.getRank() == 0 && verdict.startsWith("failed")) {
                        // Rank 0 gave up: it stays until rank 1 has called, as a live process
                        // would (its page stays mapped either way).
                        Thread.sleep(Math.max(0, lateMs - TIMEOUT.toMillis()) + 100);
                    }
                    return verdict;
                });
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "auto"})
    void aRankLaterThanItsPeersTimeoutFailsTheCollectiveToo(String transport) throws Exception {
        List<String> v = verdicts(transport, 2 * TIMEOUT.toMillis());
        assertTrue(v.get(0).startsWith("failed: ") && v.get(0).contains("timed out"), v.get(0));
        assertTrue(v.get(1).startsWith("failed: "), "rank 1 completed what rank 0 failed: " + v);
        assertTrue(v.get(1).contains("rank 0"), v.get(1));
    }

    /**
     * Rank 1 arrives up to 40 ms after rank 0's deadline, before its own transport has heard of
     * rank 0's abort (over shm, whose idle progress thread polls slowly): on the code before the
     * board's handshake, a quarter of such runs completed on rank 1 and failed on rank 0.
     */
    @Test
    void ranksArrivingAroundTheDeadlineAgree() throws Exception {
        List<String> outcomes = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            long late = TIMEOUT.toMillis() + ThreadLocalRandom.current().nextLong(0, 40);
            List<String> v = verdicts("shm", late);
            boolean ok0 = v.get(0).startsWith("ok");
            assertEquals(ok0, v.get(1).startsWith("ok"), "late by " + late + " ms: " + v);
            if (ok0) {
                assertEquals("ok 4.0", v.get(0));
                assertEquals("ok 4.0", v.get(1));
            }
            outcomes.add(ok0 ? "ok" : "failed");
        }
        System.out.println("verdicts around the deadline: " + outcomes);
    }
}
