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
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The agent store in trouble from outside the job, with real launchers: the node serving it hangs
 * (SIGSTOP, as a host that freezes or is cut off), or a launcher of another job reaches it. The
 * bounds are generous for a loaded two-core machine, and still far below the {@code --rdzv-timeout}
 * the launchers once waited out.
 */
@Timeout(240)
class AgentStoreFaultsTest {

    private static final Duration START = Duration.ofSeconds(90);
    private static final String WORKER = LaunchTestWorker.class.getName();

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static LauncherProcess launchNode(String[] common, String rank, String... steps)
            throws IOException {
        List<String> args = new ArrayList<>(List.of("--jvm-opts", LauncherProcess.SMALL_JVM));
        args.addAll(List.of(common));
        args.addAll(List.of("--node-rank", rank, WORKER));
        args.addAll(List.of(steps));
        return LauncherProcess.start(Map.of(), args.toArray(new String[0]));
    }

    private static void signal(String signal, long pid) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS), "kill -" + signal + " " + pid + " hangs");
        assertEquals(0, kill.exitValue(), "kill -" + signal + " " + pid);
    }

    /**
     * Node 0's launcher, which serves the store, stops answering: node 1 finds the store lost
     * within about --heartbeat-timeout (each of its calls is bounded by it) and exits, rather than
     * blocking in a call for --rdzv-timeout while its own workers go unwatched.
     */
    @Test
    void aHungStoreHostIsNoticedWithinTheHeartbeatTimeout() throws Exception {
        int heartbeat = 5;
        String[] common = {
            "--nnodes", "2",
            "--master-port", "" + freePort(),
            "--heartbeat-timeout", "" + heartbeat,
            "--rdzv-timeout", "300",
            "--term-timeout", "5"
        };
        try (LauncherProcess node0 = launchNode(common, "0", "sleep:300");
                LauncherProcess node1 = launchNode(common, "1", "sleep:300")) {
            node0.awaitLines("SLEEPING", 1, START);
            node1.awaitLines("SLEEPING", 1, START);
            long pid0 = node0.process().pid();
            signal("STOP", pid0);
            try {
                // the heartbeat timeout, stopping node 1's worker, and a slow machine's margin
                int exit = node1.waitFor(Duration.ofSeconds(heartbeat + 40));
                assertEquals(1, exit, node1::describe);
                String err = node1.stderr();
                assertTrue(err.contains("djlrun: lost the agent store"), err);
            } finally {
                signal("CONT", pid0); // node0.close() then kills it and its worker
            }
        }
    }

    /**
     * A launcher with another --nnodes reaches a running job's store (a stray of another job, on
     * the same port): it fails alone, naming both numbers, and the job runs on to success.
     */
    @Test
    void aStrayLauncherOfAnotherSizeFailsAloneAndTheJobRunsOn(@TempDir Path dir) throws Exception {
        int port = freePort();
        String[] job = {"--nnodes", "2", "--master-port", "" + port};
        Path proceed = dir.resolve("proceed");
        String await = "await:" + proceed;
        try (LauncherProcess node0 = launchNode(job, "0", "env", await);
                LauncherProcess node1 = launchNode(job, "1", "env", await)) {
            node0.awaitLines("AWAITING", 1, START);
            node1.awaitLines("AWAITING", 1, START);
            String[] stray = {"--nnodes", "3", "--master-port", "" + port};
            int strayExit;
            String strayErr;
            try (LauncherProcess late = launchNode(stray, "2", "env")) {
                strayExit = late.waitFor(START);
                strayErr = late.describe();
            }
            // the job was still running when the stray left, was not told to stop, and succeeds
            assertTrue(node0.process().isAlive(), node0::describe);
            assertTrue(node1.process().isAlive(), node1::describe);
            Files.createFile(proceed);
            assertEquals(0, node0.waitFor(START), node0::describe);
            assertEquals(0, node1.waitFor(START), node1::describe);
            assertFalse(node0.stderr().contains("job failed"), node0::describe);
            assertFalse(node1.stderr().contains("job failed"), node1::describe);
            // the stray failed alone, started no worker, and says why
            assertEquals(1, strayExit, strayErr);
            assertFalse(strayErr.contains("ENV "), strayErr);
            assertTrue(
                    strayErr.contains(
                            "djlrun: --nnodes 3: run 'none' at 127.0.0.1:"
                                    + port
                                    + " is already running with --nnodes 2"),
                    strayErr);
            assertTrue(strayErr.contains("(expected: the same --nnodes on every node"), strayErr);
        }
    }
}
