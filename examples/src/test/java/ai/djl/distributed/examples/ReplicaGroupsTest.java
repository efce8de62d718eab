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
package ai.djl.distributed.examples;

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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code replica_groups} as users run it: {@code bin/djlrun} jobs of two ranks each, one per
 * replica, each a launcher JVM with its own world and store, meeting in the main store that replica
 * 0's rank 0 serves. The expected sums are added up here from the example's rule, rank i of replica
 * r contributing 10r + i + 1.
 */
class ReplicaGroupsTest {

    private static final int RANKS = 2;
    private static final int REPLICAS = 2;
    private static final Pattern SERVING =
            Pattern.compile(
                    "\\[rank0]: replica_groups: replica 0 serves the main store at"
                            + " 127\\.0\\.0\\.1:(\\d+); waiting for 2 replicas");

    private static String[] replica(int id, String mainStore, String timeoutSeconds) {
        return new String[] {
            "replica_groups",
            "--replica-id",
            Integer.toString(id),
            "--num-replicas",
            Integer.toString(REPLICAS),
            "--main-store",
            mainStore,
            "--timeout",
            timeoutSeconds
        };
    }

    private static long contribution(int replica, int rank) {
        return 10L * replica + rank + 1;
    }

    @Test
    @Timeout(240)
    void twoJobsOfTwoRanksSumAcrossTheReplicasAndExitByThemselves(@TempDir Path dir)
            throws Exception {
        Path dir0 = Files.createDirectory(dir.resolve("replica0"));
        Path dir1 = Files.createDirectory(dir.resolve("replica1"));
        // Replica 0 serves the main store on a free port and prints it; replica 1 is told it.
        try (Djlrun.Job job0 =
                Djlrun.start(dir0, RANKS, Djlrun.WORKER_JVM, replica(0, "127.0.0.1:0", "120"))) {
            String port = job0.awaitMatch(SERVING, 120).group(1);
            try (Djlrun.Job job1 =
                    Djlrun.start(
                            dir1,
                            RANKS,
                            Djlrun.WORKER_JVM,
                            replica(1, "127.0.0.1:" + port, "120"))) {
                Djlrun.Run run1 = job1.await(150);
                Djlrun.Run run0 = job0.await(150);
                assertEquals(0, run0.exitCode(), run0.log());
                assertEquals(0, run1.exitCode(), run1.log());
                assertTrue(
                        run1.log()
                                .contains(
                                        "[rank0]: replica_groups: replica 1 reached the main"
                                                + " store at 127.0.0.1:"
                                                + port),
                        run1.log());
                assertEveryRankPrintsTheSums(0, run0.log());
                assertEveryRankPrintsTheSums(1, run1.log());
            }
        }
    }

    private static void assertEveryRankPrintsTheSums(int replica, String log) {
        long total = 0;
        for (int r = 0; r < REPLICAS; r++) {
            for (int i = 0; i < RANKS; i++) {
                total += contribution(r, i);
            }
        }
        long replicaSum = 0;
        for (int i = 0; i < RANKS; i++) {
            replicaSum += contribution(replica, i);
        }
        for (int i = 0; i < RANKS; i++) {
            String prefix =
                    "[rank" + i + "]: replica_groups: replica " + replica + "/2, rank " + i + "/2:";
            String line =
                    prefix
                            + " contributed "
                            + contribution(replica, i)
                            + ", replica sum "
                            + replicaSum
                            + ", sum over all replicas "
                            + total
                            + " from "
                            + RANKS * REPLICAS
                            + " ranks";
            assertTrue(log.contains(line), () -> "missing: " + line + "\n" + log);
            assertEquals(1, log.split(Pattern.quote(prefix), -1).length - 1, log);
        }
    }

    @Test
    @Timeout(120)
    void aReplicaWhosePeerNeverComesFailsAtTheTimeoutNamingIt(@TempDir Path dir) throws Exception {
        long start = System.nanoTime();
        Djlrun.Run run = Djlrun.run(dir, RANKS, 90, replica(0, "127.0.0.1:0", "4"));
        double seconds = (System.nanoTime() - start) / 1e9;
        String log = run.log();
        assertEquals(1, run.exitCode(), log);
        Matcher serving = SERVING.matcher(log);
        assertTrue(serving.find(), log);
        assertTrue(
                log.contains(
                        "[rank0]: replica_groups: replica 0: replica 1 did not join within 4 s"
                                + " (expected: a job for each --replica-id from 0 to 1, all with"
                                + " --num-replicas 2 and --main-store 127.0.0.1:"
                                + serving.group(1)
                                + ")"),
                log);
        // the leader's failure ends its replica: the launcher names whichever rank exited first
        assertTrue(log.contains("djlrun: job failed: rank "), log);
        assertFalse(log.contains("sum over all replicas"), log);
        assertTrue(seconds >= 4, "failed after " + seconds + " s, before the timeout");
    }

    @Test
    @Timeout(120)
    void aReplicaWhoseMainStoreIsNeverServedFailsAtTheTimeoutNamingIt(@TempDir Path dir)
            throws Exception {
        int port;
        try (ServerSocket free = new ServerSocket(0)) {
            port = free.getLocalPort();
        }
        Djlrun.Run run = Djlrun.run(dir, RANKS, 90, replica(1, "127.0.0.1:" + port, "4"));
        String log = run.log();
        assertEquals(1, run.exitCode(), log);
        assertTrue(
                log.contains(
                        "[rank0]: replica_groups: replica 1: the main store at 127.0.0.1:"
                                + port
                                + " did not answer within 4 s (expected: the hosting replica,"
                                + " replica 0 unless --host-main-store says otherwise, serving it"
                                + " there)"),
                log);
        assertFalse(log.contains("sum over all replicas"), log);
    }

    @Test
    @Timeout(60)
    void aloneItIsAReplicaOfOneRank() throws IOException {
        ReplicaGroups.Result r =
                ReplicaGroups.runExample(
                        "--replica-id", "0", "--num-replicas", "1", "--main-store", "127.0.0.1:0");
        assertEquals(new ReplicaGroups.Result(0, 0, 1, 1, 1, 1), r);
    }
}
