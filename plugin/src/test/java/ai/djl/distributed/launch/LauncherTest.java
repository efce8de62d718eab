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

import ai.djl.distributed.store.tcp.TcpStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code djlrun} as users run it: a launcher JVM starting worker JVMs ({@link LaunchTestWorker}),
 * checked from their output. Every expected value is computed here from the options given.
 */
@Timeout(90)
class LauncherTest {

    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String WORKER = LaunchTestWorker.class.getName();
    private static final Pattern LINE = Pattern.compile("^\\[rank(\\d+)]: (.*)$");

    private static LauncherProcess launch(String... args) throws IOException {
        return launch(Map.of(), args);
    }

    /** Starts djlrun with small JVMs, {@code env} added to its environment. */
    private static LauncherProcess launch(Map<String, String> env, String... args)
            throws IOException {
        List<String> all = new ArrayList<>(List.of("--jvm-opts", LauncherProcess.SMALL_JVM));
        all.addAll(List.of(args));
        return LauncherProcess.start(env, all.toArray(new String[0]));
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /** Each rank's ENV lines, in order (one per attempt), parsed to maps. */
    static Map<Integer, List<Map<String, String>>> envLines(String stdout) {
        Map<Integer, List<Map<String, String>>> out = new HashMap<>();
        for (String line : stdout.split("\n")) {
            Matcher m = LINE.matcher(line);
            if (m.matches() && m.group(2).startsWith("ENV ")) {
                Map<String, String> env = new HashMap<>();
                for (String kv : m.group(2).substring(4).split(" ")) {
                    int eq = kv.indexOf('=');
                    env.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
                int rank = Integer.parseInt(m.group(1));
                out.computeIfAbsent(rank, r -> new ArrayList<>()).add(env);
            }
        }
        return out;
    }

    /** The variables torchrun gives worker {@code rank}, computed from the job's shape. */
    static Map<String, String> expectedEnv(
            int rank, int localRank, int node, int nodes, int local, int world, String port) {
        Map<String, String> env = new HashMap<>();
        env.put("RANK", "" + rank);
        env.put("LOCAL_RANK", "" + localRank);
        env.put("GROUP_RANK", "" + node);
        env.put("ROLE_RANK", "" + rank);
        env.put("ROLE_NAME", "default");
        env.put("LOCAL_WORLD_SIZE", "" + local);
        env.put("WORLD_SIZE", "" + world);
        env.put("GROUP_WORLD_SIZE", "" + nodes);
        env.put("ROLE_WORLD_SIZE", "" + world);
        env.put("MASTER_ADDR", "127.0.0.1");
        env.put("MASTER_PORT", port);
        env.put("TORCHELASTIC_RESTART_COUNT", "0");
        env.put("TORCHELASTIC_MAX_RESTARTS", "0");
        env.put("TORCHELASTIC_RUN_ID", "none");
        env.put("TORCHELASTIC_USE_AGENT_STORE", "True");
        env.put("TORCH_NCCL_ASYNC_ERROR_HANDLING", "1");
        if (local > 1) {
            env.put("OMP_NUM_THREADS", "1"); // torchrun's default for several workers a node
        }
        return env;
    }

    private static void assertAllGone(Set<Long> pids, Duration within) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        for (long pid : pids) {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                assertTrue(System.nanoTime() < deadline, "worker " + pid + " outlived djlrun");
                Thread.sleep(50);
            }
        }
    }

    @Test
    void workersGetTorchrunsEnvironmentPrefixedOutputAndMeetThroughTheStore() throws Exception {
        try (LauncherProcess djlrun =
                launch("--nproc-per-node", "3", WORKER, "env", "store", "stderr:bye")) {
            assertEquals(0, djlrun.waitFor(WAIT), djlrun::describe);
            String out = djlrun.stdout();
            Map<Integer, List<Map<String, String>>> env = envLines(out);
            assertEquals(Set.of(0, 1, 2), env.keySet(), djlrun::describe);
            String port = env.get(0).get(0).get("MASTER_PORT");
            int p = Integer.parseInt(port);
            assertTrue(p > 0 && p < 65536, port);
            for (int rank = 0; rank < 3; ++rank) {
                assertEquals(List.of(expectedEnv(rank, rank, 0, 1, 3, 3, port)), env.get(rank));
                assertTrue(
                        out.contains(
                                "[rank"
                                        + rank
                                        + "]: STORE rank="
                                        + rank
                                        + " world=3"
                                        + " saw=[from 0, from 1, from 2]\n"),
                        djlrun::describe);
                assertTrue(
                        out.contains(
                                "[rank"
                                        + rank
                                        + "]: PROP ai.djl.pytorch.num_threads=1"
                                        + " ai.djl.pytorch.num_interop_threads=1\n"),
                        djlrun::describe);
                assertTrue(djlrun.stderr().contains("[rank" + rank + "]: bye\n"));
            }
            for (String line : out.split("\n")) {
                assertTrue(LINE.matcher(line).matches(), "not prefixed: '" + line + "'");
            }
            assertFalse(out.contains("bye"), "stderr lines belong on stderr");
            assertTrue(djlrun.stderr().contains("OMP_NUM_THREADS=1"), djlrun::stderr);
            // glibc's malloc tuned for reuse (Linux only: the launcher adds nothing elsewhere)
            String malloc =
                    System.getProperty("os.name").startsWith("Linux")
                            ? " MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=33554432"
                                    + " MALLOC_TRIM_THRESHOLD_=1073741824"
                            : "";
            for (int rank = 0; rank < 3; ++rank) {
                assertTrue(
                        out.contains("[rank" + rank + "]: MALLOC" + malloc + "\n"),
                        djlrun::describe);
            }
            assertAllGone(djlrun.workerPids(), Duration.ofSeconds(5));
        }
    }

    @Test
    void theUsersMallocSettingsWinWhole() throws Exception {
        try (LauncherProcess djlrun =
                launch(Map.of("GLIBC_TUNABLES", ""), "--nproc-per-node", "1", WORKER, "env")) {
            assertEquals(0, djlrun.waitFor(WAIT), djlrun::describe);
            assertTrue(
                    djlrun.stdout().contains("[rank0]: MALLOC GLIBC_TUNABLES=\n"),
                    djlrun::describe);
            assertFalse(djlrun.stderr().contains("MALLOC_ARENA_MAX=1"), djlrun::stderr);
        }
    }

    @Test
    void aFailedWorkerStopsTheOthersAndIsNamed() throws Exception {
        try (LauncherProcess djlrun =
                launch("--nproc-per-node", "3", WORKER, "env", "store", "fail:1:3", "sleep:60")) {
            assertEquals(1, djlrun.waitFor(WAIT), djlrun::describe);
            String err = djlrun.stderr();
            assertTrue(
                    err.contains("job failed: rank 1 (local rank 1 on node 0, pid "),
                    djlrun::describe);
            assertTrue(err.contains(") exited with code 3 at 20"), err);
            assertTrue(err.contains("no restarts left (--max-restarts 0)"), err);
            Set<Long> pids = djlrun.workerPids();
            assertEquals(3, pids.size(), djlrun::describe);
            assertAllGone(pids, Duration.ofSeconds(5));
        }
    }

    /** The pids of the workers' {@code child} processes, from their output. */
    private static Set<Long> childPids(String stdout) {
        Set<Long> pids = new HashSet<>();
        Matcher m = Pattern.compile("CHILD (\\d+)").matcher(stdout);
        while (m.find()) {
            pids.add(Long.parseLong(m.group(1)));
        }
        return pids;
    }

    @Test
    void theChildrenOfAFailedWorkerGoWithTheJob() throws Exception {
        // Rank 1 exits with a child running: the child then belongs to init, and only its process
        // group still ties it to the worker.
        try (LauncherProcess djlrun =
                launch("--nproc-per-node", "2", WORKER, "env", "child", "fail:1:3", "sleep:60")) {
            assertEquals(1, djlrun.waitFor(WAIT), djlrun::describe);
            Set<Long> children = childPids(djlrun.stdout());
            assertEquals(2, children.size(), djlrun::describe);
            assertAllGone(children, Duration.ofSeconds(5));
        }
    }

    @Test
    void aFailedWorkerRestartsTheGroupWithTheNextRestartCount() throws Exception {
        try (LauncherProcess djlrun =
                launch(
                        "--nproc_per_node=2",
                        "--max-restarts",
                        "2",
                        WORKER,
                        "env",
                        "store",
                        "fail-first:1:7")) {
            assertEquals(0, djlrun.waitFor(WAIT), djlrun::describe);
            Map<Integer, List<Map<String, String>>> env = envLines(djlrun.stdout());
            for (int rank = 0; rank < 2; ++rank) {
                List<Map<String, String>> attempts = env.get(rank);
                assertEquals(2, attempts.size(), djlrun::describe);
                for (int attempt = 0; attempt < 2; ++attempt) {
                    Map<String, String> e = attempts.get(attempt);
                    assertEquals("" + attempt, e.get("TORCHELASTIC_RESTART_COUNT"));
                    assertEquals("2", e.get("TORCHELASTIC_MAX_RESTARTS"));
                }
            }
            assertTrue(djlrun.stdout().contains("[rank0]: STORE rank=0 world=2"));
            assertTrue(djlrun.stdout().contains("[rank1]: STORE rank=1 world=2"));
            assertTrue(djlrun.stderr().contains("exited with code 7 at "), djlrun::describe);
            assertTrue(djlrun.stderr().contains("restarting all workers: restart 1 of 2"));
        }
    }

    @Test
    void sigtermStopsTheWorkersAndExitsWith143() throws Exception {
        try (LauncherProcess djlrun =
                launch(
                        "--nproc-per-node",
                        "2",
                        "--term-timeout",
                        "10",
                        WORKER,
                        "env",
                        "sleep:60")) {
            djlrun.awaitLines("SLEEPING", 2, WAIT);
            Set<Long> pids = djlrun.workerPids();
            assertEquals(2, pids.size());
            djlrun.process().destroy(); // SIGTERM
            assertEquals(143, djlrun.waitFor(Duration.ofSeconds(30)), djlrun::describe);
            assertAllGone(pids, Duration.ofSeconds(2));
            assertTrue(djlrun.stderr().contains("stopping the workers"), djlrun::describe);
        }
    }

    @Test
    void workersOfAKilledLauncherExitOnTheirOwn() throws Exception {
        try (LauncherProcess djlrun = launch(WORKER, "env", "child", "sleep:60")) {
            djlrun.awaitLines("SLEEPING", 1, WAIT);
            Set<Long> pids = djlrun.workerPids();
            Set<Long> children = childPids(djlrun.stdout());
            assertEquals(1, children.size(), djlrun::describe);
            djlrun.process().destroyForcibly(); // SIGKILL: no hook runs
            assertAllGone(pids, Duration.ofSeconds(10));
            assertAllGone(children, Duration.ofSeconds(5));
        }
    }

    @Test
    void theWatchdogOfAKilledLauncherStopsTheWorkersWholeProcessGroup() throws Exception {
        // An orphaned grandchild (init's, only its process group ties it to the worker) and a
        // child that ignores SIGTERM: neither may outlive the job.
        Set<Long> children = new HashSet<>();
        try (LauncherProcess djlrun = launch(WORKER, "env", "orphan", "stubborn", "sleep:60")) {
            djlrun.awaitLines("SLEEPING", 1, WAIT);
            Set<Long> pids = djlrun.workerPids();
            children.addAll(childPids(djlrun.stdout()));
            assertEquals(2, children.size(), djlrun::describe);
            djlrun.process().destroyForcibly(); // SIGKILL: no hook runs
            assertAllGone(pids, Duration.ofSeconds(10));
            assertAllGone(children, Duration.ofSeconds(15));
        } finally {
            children.forEach(
                    pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));
        }
    }

    @Test
    void nodesOfDifferentSizesMeetAtARendezvousEndpointAndAreNumberedAsTheyJoin() throws Exception {
        String endpoint = "127.0.0.1:" + freePort();
        String port = endpoint.substring(endpoint.indexOf(':') + 1);
        String[] common = {"--nnodes", "2", "--rdzv-endpoint", endpoint, "--rdzv-timeout", "60"};
        try (LauncherProcess small = launchSized(common, "1");
                LauncherProcess large = launchSized(common, "2")) {
            assertEquals(0, small.waitFor(WAIT), small::describe);
            assertEquals(0, large.waitFor(WAIT), large::describe);
            Map<Integer, List<Map<String, String>>> env = envLines(small.stdout());
            assertEquals(1, env.size(), small::describe);
            // nodes are numbered in joining order, which this test does not fix
            int smallNode =
                    Integer.parseInt(env.values().iterator().next().get(0).get("GROUP_RANK"));
            int smallBase = smallNode == 0 ? 0 : 2;
            int largeBase = smallNode == 0 ? 1 : 0;
            env.putAll(envLines(large.stdout()));
            assertEquals(Set.of(0, 1, 2), env.keySet(), () -> small.describe() + large.describe());
            assertEquals(
                    List.of(expectedEnv(smallBase, 0, smallNode, 2, 1, 3, port)),
                    env.get(smallBase));
            for (int local = 0; local < 2; ++local) {
                int rank = largeBase + local;
                assertEquals(
                        List.of(expectedEnv(rank, local, 1 - smallNode, 2, 2, 3, port)),
                        env.get(rank));
            }
            String both = small.stdout() + large.stdout();
            for (int rank = 0; rank < 3; ++rank) {
                String line = "STORE rank=" + rank + " world=3 saw=[from 0, from 1, from 2]";
                assertTrue(both.contains("[rank" + rank + "]: " + line), both);
            }
        }
    }

    private static LauncherProcess launchSized(String[] common, String nproc) throws IOException {
        List<String> args = new ArrayList<>(List.of(common));
        args.addAll(List.of("--nproc-per-node", nproc, WORKER, "env", "store"));
        return launch(args.toArray(new String[0]));
    }

    @Test
    void staticNodesRestartTogetherThenFailNamingTheRank() throws Exception {
        int port = freePort();
        String[] common = {"--nnodes", "2", "--master-port", "" + port, "--max-restarts", "1"};
        String[] steps = {"env", "store", "fail:1:5", "sleep:60"};
        try (LauncherProcess node0 = launchNode(common, "0", steps);
                LauncherProcess node1 = launchNode(common, "1", steps)) {
            assertEquals(1, node0.waitFor(WAIT), node0::describe);
            assertEquals(1, node1.waitFor(WAIT), node1::describe);
            for (LauncherProcess node : List.of(node0, node1)) {
                String err = node.stderr();
                assertTrue(err.contains("rank 1 (local rank 0 on node 1, pid "), node::describe);
                assertTrue(err.contains("restarting all workers: restart 1 of 1"), err);
                assertTrue(err.contains("job failed: rank 1 (local rank 0 on node 1"), err);
            }
            assertEquals(2, envLines(node0.stdout()).get(0).size(), node0::describe);
            assertEquals(
                    "1", envLines(node0.stdout()).get(0).get(1).get("TORCHELASTIC_RESTART_COUNT"));
        }
    }

    @Test
    void sigtermToOneNodeStopsEveryNode() throws Exception {
        String[] common = {"--nnodes", "2", "--master-port", "" + freePort()};
        try (LauncherProcess node0 = launchNode(common, "0", "env", "sleep:60");
                LauncherProcess node1 = launchNode(common, "1", "env", "sleep:60")) {
            node0.awaitLines("SLEEPING", 1, WAIT);
            node1.awaitLines("SLEEPING", 1, WAIT);
            node1.process().destroy();
            assertEquals(143, node1.waitFor(WAIT), node1::describe);
            assertEquals(1, node0.waitFor(WAIT), node0::describe);
            assertTrue(
                    node0.stderr().contains("job failed: the launcher of node 1 was stopped"),
                    node0::describe);
            assertAllGone(node0.workerPids(), Duration.ofSeconds(2));
            assertAllGone(node1.workerPids(), Duration.ofSeconds(2));
        }
    }

    @Test
    void sigtermToANodeBeforeTheNodesMetEndsTheOthersStartAtOnce() throws Exception {
        // Three nodes, the third never comes: node 1, stopped while it waits with node 0 at the
        // start, tells node 0 through round 0's event instead of leaving it to --rdzv-timeout.
        int port = freePort();
        String[] common = {"--nnodes", "3", "--master-port", "" + port, "--rdzv-timeout", "120"};
        try (LauncherProcess node0 = launchNode(common, "0", "env", "sleep:60");
                LauncherProcess node1 = launchNode(common, "1", "env", "sleep:60")) {
            try (TcpStore store = AgentStores.connect("127.0.0.1", port, WAIT)) {
                long deadline = System.nanoTime() + WAIT.toNanos();
                while (!store.check(List.of("djlrun/none/node/1"))) {
                    assertTrue(System.nanoTime() < deadline, node1::describe);
                    Thread.sleep(50);
                }
            }
            long stopped = System.nanoTime();
            node1.process().destroy();
            assertEquals(1, node0.waitFor(WAIT), node0::describe);
            assertTrue(
                    System.nanoTime() - stopped < Duration.ofSeconds(30).toNanos(),
                    node0::describe);
            assertTrue(
                    node0.stderr().contains("was stopped before the nodes met"), node0::describe);
            node1.waitFor(WAIT);
        }
    }

    @Test
    void sigtermToTheNodeServingTheStoreTellsTheOthers() throws Exception {
        // Node 0 serves the launchers' store: it stays up until node 0's hook has told node 1.
        String[] common = {"--nnodes", "2", "--master-port", "" + freePort()};
        try (LauncherProcess node0 = launchNode(common, "0", "env", "sleep:60");
                LauncherProcess node1 = launchNode(common, "1", "env", "sleep:60")) {
            node0.awaitLines("SLEEPING", 1, WAIT);
            node1.awaitLines("SLEEPING", 1, WAIT);
            node0.process().destroy();
            assertEquals(143, node0.waitFor(WAIT), node0::describe);
            assertEquals(1, node1.waitFor(WAIT), node1::describe);
            assertTrue(
                    node1.stderr().contains("job failed: the launcher of node 0 was stopped"),
                    node1::describe);
            assertFalse(node0.stderr().contains("could not tell the other nodes"), node0::describe);
            assertAllGone(node0.workerPids(), Duration.ofSeconds(2));
            assertAllGone(node1.workerPids(), Duration.ofSeconds(2));
        }
    }

    @Test
    void aNodeWhoseLauncherDiedIsNoticedByItsSilence() throws Exception {
        String[] common = {
            "--nnodes", "2", "--master-port", "" + freePort(), "--heartbeat-timeout", "2"
        };
        try (LauncherProcess node0 = launchNode(common, "0", "env", "sleep:60");
                LauncherProcess node1 = launchNode(common, "1", "env", "sleep:60")) {
            node0.awaitLines("SLEEPING", 1, WAIT);
            node1.awaitLines("SLEEPING", 1, WAIT);
            node1.process().destroyForcibly();
            assertEquals(1, node0.waitFor(Duration.ofSeconds(20)), node0::describe);
            assertTrue(
                    node0.stderr()
                            .contains(
                                    "job failed: the launcher of node 1 stopped responding:"
                                            + " no heartbeat for 2 s"),
                    node0::describe);
            assertAllGone(node0.workerPids(), Duration.ofSeconds(2));
            assertAllGone(node1.workerPids(), Duration.ofSeconds(10)); // by its watchdog
        }
    }

    @Test
    void aNodeThatDiedIsNoticedAtTheRestartBarrierToo() throws Exception {
        // Node 1's launcher dies; node 0's worker fails before node 1's silence shows, so node 0
        // waits at the restart's barrier, where node 1 never comes. Its silence ends the wait:
        // after the heartbeat timeout and the time a live node may take to stop its workers
        // (6 + 1 + 12 s), well before --rdzv-timeout.
        String[] common = {
            "--nnodes", "2",
            "--master-port", "" + freePort(),
            "--heartbeat-timeout", "6",
            "--term-timeout", "1",
            "--rdzv-timeout", "120",
            "--max-restarts", "2"
        };
        try (LauncherProcess node0 = launchNode(common, "0", "env", "sleep:3", "fail:0:5");
                LauncherProcess node1 = launchNode(common, "1", "env", "sleep:60")) {
            node1.awaitLines("SLEEPING", 1, WAIT);
            node1.process().destroyForcibly();
            assertEquals(1, node0.waitFor(WAIT), node0::describe);
            String err = node0.stderr();
            assertTrue(err.contains("restarting all workers: restart 1 of 2"), err);
            assertTrue(
                    err.contains(
                            "job failed: the launcher of node 1 stopped responding: no heartbeat"
                                    + " for 19 s"),
                    err);
            assertAllGone(node1.workerPids(), Duration.ofSeconds(10)); // by its watchdog
        }
    }

    @Test
    void aNodeDoneEarlyWaitsPastTheRendezvousTimeoutForTheOthers() throws Exception {
        // Node 1's worker works 8 s beyond node 0's, past --rdzv-timeout 3: node 0 waits on,
        // since node 1's heartbeat goes on, and the job succeeds.
        int port = freePort();
        String[] common = {"--nnodes", "2", "--master-port", "" + port, "--rdzv-timeout", "3"};
        try (LauncherProcess node0 = launchNode(common, "0", "env", "store");
                LauncherProcess node1 = launchNode(common, "1", "env", "store", "sleep:8")) {
            assertEquals(0, node1.waitFor(WAIT), node1::describe);
            assertEquals(0, node0.waitFor(WAIT), node0::describe);
            assertTrue(node1.stdout().contains("SLEEPING"), node1::describe);
        }
    }

    @Test
    void nodesThatDisagreeOnTheirNumberFailAtOnceNamingBoth() throws Exception {
        int port = freePort();
        try (LauncherProcess node0 =
                        launchNode(
                                new String[] {"--nnodes", "2", "--master-port", "" + port}, "0");
                LauncherProcess node1 =
                        launchNode(
                                new String[] {"--nnodes", "3", "--master-port", "" + port}, "1")) {
            // well within --rdzv-timeout's 600 s, which both waited out before
            assertEquals(1, node0.waitFor(WAIT), node0::describe);
            assertEquals(1, node1.waitFor(WAIT), node1::describe);
            // The node that finds the difference names both numbers; the other reads it in the
            // store, or, if the first served the store and had closed it, finds it gone.
            String why = "(expected: the same --nnodes on every node)";
            String both = node0.stderr() + node1.stderr();
            assertTrue(both.contains(why), both);
            assertTrue(both.contains("--nnodes 2") || both.contains("--nnodes 3"), both);
            for (LauncherProcess node : List.of(node0, node1)) {
                String err = node.stderr();
                assertTrue(err.contains(why) || err.contains("lost the agent store"), err);
            }
        }
    }

    private static LauncherProcess launchNode(String[] common, String rank, String... steps)
            throws IOException {
        List<String> args = new ArrayList<>(List.of(common));
        args.addAll(List.of("--node-rank", rank, WORKER));
        args.addAll(List.of(steps));
        return launch(args.toArray(new String[0]));
    }
}
