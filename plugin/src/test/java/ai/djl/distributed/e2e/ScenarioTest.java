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
package ai.djl.distributed.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.launch.LauncherProcess;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

/**
 * Faults one after the other in one {@code djlrun} job of two ranks, each on a fresh world, over
 * every transport: a peer that stalls past a short group timeout and comes back (an all-reduce
 * small enough for the shared-memory board, and one large enough to be cut off mid-message),
 * mismatched all-reduces (op, size, type), an interrupted wait; then a healthy all-reduce. Each
 * failure must name the peer or both collectives, come when it should, and make the next call fail
 * at once; the job ends by itself and leaves nothing in {@code /dev/shm}.
 */
@Timeout(150)
class ScenarioTest {

    /** The group timeout. */
    private static final long TIMEOUT_MS = 4_000;

    /**
     * How long the late rank stalls after the all-reduce both ran: past its peer's timeout, by half
     * a timeout, and within the peer's wait for the next scenario's group, which the peer begins
     * once its collective timed out and which lasts a timeout too (so the stall cannot be 3
     * timeouts). Both margins are half a timeout, 2 s.
     */
    private static final long LATE_MS = TIMEOUT_MS * 3 / 2;

    /** When rank 0's waiting all-reduce is interrupted: far before its timeout. */
    private static final long INTERRUPT_MS = 500;

    /**
     * When rank 1 comes to that all-reduce (which it would complete): half a timeout after the
     * interrupt, and half a timeout before rank 0, which failed at the interrupt, gives up waiting
     * for it in the next scenario's group.
     */
    private static final long INTERRUPT_LATE_MS = INTERRUPT_MS + TIMEOUT_MS / 2;

    /** How the group timeout is written in the failures. */
    private static final String TIMED_OUT = "timed out after " + Duration.ofMillis(TIMEOUT_MS);

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void everyFaultIsNamedAndTheJobEndsByItself(String transport) throws Exception {
        SharedMemoryFiles shm = SharedMemoryFiles.snapshot();
        try (LauncherProcess djlrun =
                Faults.launch(
                        transport,
                        TIMEOUT_MS,
                        "--nproc-per-node",
                        "2",
                        FaultWorker.class.getName(),
                        "group:late-small",
                        "allreduce:1000",
                        "late:1:" + LATE_MS,
                        "allreduce:1024",
                        "group:late-large",
                        "allreduce:1000",
                        "late:1:" + LATE_MS,
                        "allreduce:4194304",
                        "group:op",
                        "mismatch:op:1000",
                        "group:size",
                        "mismatch:size:1000",
                        "group:type",
                        "mismatch:type:1000",
                        "group:interrupt",
                        "interrupt:" + INTERRUPT_MS,
                        "late:1:" + INTERRUPT_LATE_MS,
                        "allreduce:1024",
                        "group:after",
                        "allreduce:1000")) {
            assertEquals(1, djlrun.waitFor(Faults.WAIT), djlrun::describe);
            String out = djlrun.stdout();
            for (String scenario : new String[] {"late-small", "late-large"}) {
                String waited = Faults.line(out, 0, "FAILED " + scenario);
                assertTrue(waited.contains(TIMED_OUT), waited);
                assertTrue(waited.contains("waiting for rank 1"), waited);
                long ms = Faults.millis(waited);
                // at its timeout, before the late rank came back
                assertTrue(ms >= TIMEOUT_MS - 50 && ms < LATE_MS, waited);
                // The late rank names the rank that gave up, and why: the first cause travels.
                String late = Faults.line(out, 1, "FAILED " + scenario);
                assertTrue(late.contains("rank 0 aborted its process group: "), late);
                assertTrue(late.contains(TIMED_OUT), late);
                // at once, not at its own timeout
                assertTrue(Faults.millis(late) < TIMEOUT_MS, late);
            }
            assertBothSides(out, "op", "SUM)", "MAX)");
            assertBothSides(out, "size", "x 1000,", "x 1001,");
            assertBothSides(out, "type", "float32", "float64");
            String interrupted = Faults.line(out, 0, "FAILED interrupt");
            assertTrue(interrupted.contains("interrupted"), interrupted);
            long ms = Faults.millis(interrupted);
            // at the interrupt, not at the timeout
            assertTrue(ms >= INTERRUPT_MS - 50 && ms < TIMEOUT_MS, interrupted);
            String late = Faults.line(out, 1, "FAILED interrupt");
            assertTrue(late.contains("rank 0") && late.contains("interrupted"), late);
            for (int rank = 0; rank < 2; rank++) {
                for (String scenario :
                        new String[] {"late-small", "late-large", "op", "size", "type"}) {
                    String next = Faults.line(out, rank, "NEXT " + scenario);
                    // at once: a call that waited would take a whole timeout
                    assertTrue(Faults.millis(next) < TIMEOUT_MS, next);
                }
                assertTrue(out.contains("[rank" + rank + "]: OK allreduce 1000"), out);
                assertTrue(out.contains("[rank" + rank + "]: ENDED rank " + rank), out);
            }
            Faults.assertAllExited(djlrun);
            shm.assertNothingNew();
        }
    }

    /** Both ranks fail the scenario at once, each naming both sides of the mismatch. */
    private static void assertBothSides(String out, String scenario, String mine, String theirs) {
        for (int rank = 0; rank < 2; rank++) {
            String failed = Faults.line(out, rank, "FAILED " + scenario);
            assertTrue(failed.contains(mine) && failed.contains(theirs), failed);
            assertTrue(Faults.millis(failed) < TIMEOUT_MS, failed);
        }
    }
}
