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

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Restarts under a real {@code djlrun --max-restarts}: a process group formed again in the next
 * attempt on the same launcher store, over every transport, and a job that fails every attempt.
 */
@Timeout(180)
class RestartTest {

    @ParameterizedTest
    @ValueSource(strings = {"auto", "shm", "tcp"})
    void aGroupFormsAgainAfterAWorkerFailsInAttemptZero(String transport) throws Exception {
        SharedMemoryFiles shm = SharedMemoryFiles.snapshot();
        try (LauncherProcess djlrun =
                Faults.launch(
                        transport,
                        60_000,
                        "--max-restarts",
                        "1",
                        "--nproc-per-node",
                        "2",
                        FaultWorker.class.getName(),
                        "allreduce:1000",
                        "fail-first:1:3",
                        // small (the board, recursive doubling) and large (ring, direct)
                        "allreduce:7",
                        "allreduce:300000")) {
            assertEquals(0, djlrun.waitFor(Faults.WAIT), djlrun::describe);
            String out = djlrun.stdout();
            String err = djlrun.stderr();
            assertTrue(err.contains("exited with code 3"), djlrun::describe);
            assertTrue(err.contains("restarting all workers: restart 1 of 1"), djlrun::describe);
            for (int rank = 0; rank < 2; rank++) {
                String prefix = "[rank" + rank + "]: ";
                // attempt 0 and attempt 1 both reduced 1,000 values; only attempt 1 went on
                assertEquals(2, Faults.count(out, prefix + "OK allreduce 1000"), out);
                assertEquals(1, Faults.count(out, prefix + "OK allreduce 300000"), out);
                assertEquals(1, Faults.count(out, prefix + "DONE rank " + rank), out);
            }
            Faults.assertAllExited(djlrun);
            shm.assertNothingNew();
        }
    }

    @Test
    void aJobThatFailsEveryAttemptExitsNonZeroNamingTheFailure() throws Exception {
        SharedMemoryFiles shm = SharedMemoryFiles.snapshot();
        try (LauncherProcess djlrun =
                Faults.launch(
                        "auto",
                        60_000,
                        "--max-restarts",
                        "1",
                        "--nproc-per-node",
                        "2",
                        FaultWorker.class.getName(),
                        "allreduce:1000",
                        "fail:0:5",
                        "allreduce:1000")) {
            assertEquals(1, djlrun.waitFor(Faults.WAIT), djlrun::describe);
            String err = djlrun.stderr();
            assertTrue(err.contains("restarting all workers: restart 1 of 1"), err);
            assertTrue(err.contains("job failed: rank 0 (local rank 0 on node 0, pid "), err);
            assertEquals(2, Faults.count(err, "exited with code 5"), err);
            assertTrue(err.contains("no restarts left (--max-restarts 1)"), err);
            Faults.assertAllExited(djlrun);
            shm.assertNothingNew();
        }
    }
}
