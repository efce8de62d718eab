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
package ai.djl.distributed.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

/** A worker's environment, command line and output prefix, for a node in the middle of a job. */
class WorkerSetupTest {

    // node 1 of 3, with 2 workers, after a node of 3: ranks 3 and 4 of 7
    private static final NodeAssignment NODE = new NodeAssignment(1, 3, 3, 7, 2, "head", 29400);

    private static WorkerSetup setup(String omp, String... args) {
        LaunchOptions o =
                LaunchOptions.parse(
                        List.of(args),
                        Map.of("PET_NNODES", "3", "PET_RDZV_ENDPOINT", "head:29400"));
        return new WorkerSetup(
                o,
                NODE,
                "com.example.Train",
                "cp.jar",
                "/jdk/bin/java",
                omp,
                Map.of("MALLOC_ARENA_MAX", "1"),
                null,
                42);
    }

    @Test
    void environmentIsTorchrunsWithRanksFromTheAssignment() {
        WorkerSetup s =
                setup("1", "--max-restarts", "3", "--rdzv-id", "job", "--role", "r", "x.Main");
        Map<String, String> env = s.environment(1, 2);
        Map<String, String> expected =
                Map.ofEntries(
                        Map.entry("LOCAL_RANK", "1"),
                        Map.entry("RANK", "4"),
                        Map.entry("GROUP_RANK", "1"),
                        Map.entry("ROLE_RANK", "4"),
                        Map.entry("ROLE_NAME", "r"),
                        Map.entry("LOCAL_WORLD_SIZE", "2"),
                        Map.entry("WORLD_SIZE", "7"),
                        Map.entry("GROUP_WORLD_SIZE", "3"),
                        Map.entry("ROLE_WORLD_SIZE", "7"),
                        Map.entry("MASTER_ADDR", "head"),
                        Map.entry("MASTER_PORT", "29400"),
                        Map.entry("TORCHELASTIC_RESTART_COUNT", "2"),
                        Map.entry("TORCHELASTIC_MAX_RESTARTS", "3"),
                        Map.entry("TORCHELASTIC_RUN_ID", "job"),
                        Map.entry("TORCHELASTIC_USE_AGENT_STORE", "True"),
                        Map.entry("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1"),
                        Map.entry("OMP_NUM_THREADS", "1"),
                        Map.entry("MALLOC_ARENA_MAX", "1"));
        assertEquals(expected, env);
        assertFalse(setup(null, "x.Main").environment(0, 0).containsKey("OMP_NUM_THREADS"));
    }

    @Test
    void commandRunsTheMainClassThroughWorkerMainWithDjlsThreads() {
        WorkerSetup s =
                setup(
                        "4",
                        "--jvm-opts",
                        "-Xmx1g -Dai.djl.pytorch.num_interop_threads=2",
                        "x.Main",
                        "a",
                        "b");
        assertEquals(
                List.of(
                        "/jdk/bin/java",
                        "-Xmx1g",
                        "-Dai.djl.pytorch.num_interop_threads=2",
                        "-Dai.djl.pytorch.num_threads=4",
                        "-D" + WorkerMain.AGENT_PID_PROPERTY + "=42",
                        "-cp",
                        "cp.jar",
                        WorkerMain.class.getName(),
                        "com.example.Train",
                        "a",
                        "b"),
                s.command());
        assertFalse(String.join(" ", setup(null, "x.Main").command()).contains("num_threads"));
    }

    @Test
    void linePrefixesFollowTheTemplate() {
        assertEquals("[rank3]: ", setup(null, "x.Main").linePrefix(0));
        assertEquals(
                "default1/4 $other ${x}: ",
                setup(
                                null,
                                "--log-line-prefix-template",
                                "${role_name}$local_rank/$rank $other ${x}: ",
                                "x.Main")
                        .linePrefix(1));
        assertEquals("", setup(null, "--log-line-prefix-template=", "x.Main").linePrefix(1));
    }
}
