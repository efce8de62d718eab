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
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;

/**
 * A rank SIGKILLed in the middle of a stream of all-reduces (4 KiB and 16 MiB), over every
 * transport: the survivor fails long before its (one-minute) group timeout, naming the dead rank,
 * its next call fails at once, and the job ends by itself with nothing left in {@code /dev/shm}.
 */
@Timeout(120)
class KillTest {

    /** The survivors' group timeout. */
    private static final long TIMEOUT_MS = 60_000;

    /**
     * A quarter of the timeout: far beyond any detection the transports promise (tens of ms, see
     * docs/PERFORMANCE.md), since a loaded 2-core machine stalls, yet far below the timeout, so a
     * survivor that only failed at its timeout cannot pass.
     */
    private static final long BOUND_MS = TIMEOUT_MS / 4;

    @ParameterizedTest
    @CsvSource({
        "tcp, 1024",
        "tcp, 4194304",
        "shm, 1024",
        "shm, 4194304",
        "auto, 1024",
        "auto, 4194304"
    })
    void aKilledRankFailsTheSurvivorPromptlyNamingIt(String transport, int count) throws Exception {
        SharedMemoryFiles shm = SharedMemoryFiles.snapshot();
        try (LauncherProcess djlrun =
                Faults.launch(
                        transport,
                        TIMEOUT_MS,
                        "--nproc-per-node",
                        "2",
                        FaultWorker.class.getName(),
                        "loop:" + count)) {
            djlrun.awaitLines("READY", 2, Duration.ofSeconds(60));
            Thread.sleep(300); // well into the stream of all-reduces
            long victim = Long.parseLong(Faults.line(djlrun.stdout(), 1, "PID").substring(4));
            long killed = System.currentTimeMillis();
            ProcessHandle.of(victim).orElseThrow().destroyForcibly();
            assertEquals(1, djlrun.waitFor(Faults.WAIT), djlrun::describe);
            String out = djlrun.stdout();
            String failed = Faults.line(out, 0, "FAILED");
            assertTrue(failed.contains("rank 1"), failed);
            long seen = Faults.at(failed) - killed;
            System.out.printf(
                    "%s, %d floats: the kill was seen after %d ms%n", transport, count, seen);
            assertTrue(seen < BOUND_MS, "seen after " + seen + " ms: " + failed);
            String next = Faults.line(out, 0, "NEXT");
            assertTrue(Faults.millis(next) < BOUND_MS, next);
            Faults.assertAllExited(djlrun);
            shm.assertNothingNew();
        }
    }
}
