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
package ai.djl.distributed.fsdp;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.launch.LauncherProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Map;

/**
 * A rank SIGKILLed while FSDP trains (its gathers and reduce-scatters in flight): the survivor
 * fails long before its one-minute group timeout, naming the dead rank, and the job ends.
 */
@Timeout(180)
class FsdpKillTest {

    @Test
    void aKilledRankFailsTheOtherWithinTheTimeoutNamingIt() throws Exception {
        try (LauncherProcess djlrun =
                LauncherProcess.start(
                        Map.of("FSDP_TIMEOUT_MS", "60000"),
                        "--jvm-opts",
                        "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1",
                        "--nproc-per-node",
                        "2",
                        FsdpKillWorker.class.getName())) {
            djlrun.awaitLines("READY", 2, Duration.ofSeconds(90));
            Thread.sleep(200); // well into the next steps
            long victim = -1;
            for (String line : djlrun.stdout().split("\n")) {
                if (line.startsWith("[rank1]: PID ")) {
                    victim = Long.parseLong(line.substring("[rank1]: PID ".length()).trim());
                }
            }
            assertNotEquals(-1, victim, djlrun.describe());
            long killed = System.currentTimeMillis();
            ProcessHandle.of(victim).orElseThrow().destroyForcibly();
            assertNotEquals(0, djlrun.waitFor(Duration.ofSeconds(120)), djlrun::describe);
            String failed = null;
            for (String line : djlrun.stdout().split("\n")) {
                if (line.startsWith("[rank0]: FAILED at ")) {
                    failed = line;
                }
            }
            assertTrue(failed != null, djlrun::describe);
            String at = failed.substring("[rank0]: FAILED at ".length());
            long seen = Long.parseLong(at.substring(0, at.indexOf(':'))) - killed;
            assertTrue(failed.contains("rank 1"), failed);
            System.out.printf("the kill was seen after %d ms: %s%n", seen, failed);
            // The group timeout is a minute: the survivor must not have waited for it.
            assertTrue(seen < 20_000, "seen after " + seen + " ms: " + failed);
        }
    }
}
