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

import ai.djl.distributed.launch.LauncherProcess;
import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Collectives across real processes: through djlrun, and with a rank killed mid-collective. */
@Timeout(180)
class MultiProcessTest {

    @Test
    void collectivesThroughDjlrun() throws Exception {
        try (LauncherProcess p =
                LauncherProcess.start(
                        Map.of(),
                        "--jvm-opts",
                        "-Xmx512m",
                        "--nproc-per-node",
                        "3",
                        CollectiveWorker.class.getName(),
                        "check")) {
            int code = p.waitFor(Duration.ofSeconds(120));
            String out = p.stdout();
            assertEquals(0, code, p.describe());
            for (int r = 0; r < 3; r++) {
                assertTrue(out.contains("[rank" + r + "]: OK rank " + r + " of 3"), out);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm", "auto"})
    void aKilledRankFailsTheOthersPromptlyNamingIt(String transport) throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        List<JavaProcess> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 3; r++) {
                ranks.add(
                        JavaProcess.start(
                                CollectiveWorker.class,
                                Map.of(
                                        "RANK",
                                        String.valueOf(r),
                                        "WORLD_SIZE",
                                        "3",
                                        "MASTER_ADDR",
                                        "127.0.0.1",
                                        "MASTER_PORT",
                                        String.valueOf(port),
                                        "OMP_NUM_THREADS",
                                        "1",
                                        "DJL_DIST_TRANSPORT",
                                        transport),
                                "loop"));
            }
            long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
            while (!ranks.stream().allMatch(p -> p.output().contains("ready"))) {
                assertTrue(
                        System.nanoTime() < deadline,
                        "ranks did not start: " + ranks.get(0).output());
                Thread.sleep(100);
            }
            long killed = System.nanoTime();
            ranks.get(1).process().destroyForcibly();
            for (int r : new int[] {0, 2}) {
                // The group's timeout is 120 s: failing within 30 s means the death was seen.
                int code = ranks.get(r).waitFor(Duration.ofSeconds(30));
                String out = ranks.get(r).output();
                assertEquals(3, code, out);
                assertTrue(out.contains("FAILED:") && out.contains("rank 1"), out);
            }
            assertTrue(System.nanoTime() - killed < 30e9);
        } finally {
            for (JavaProcess p : ranks) {
                p.close();
            }
        }
    }
}
