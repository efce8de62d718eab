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
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * Two "hosts" on this machine: two network namespaces joined by a veth pair, each with its own
 * address and its own loopback. Rank 0 runs in one, rank 1 in the other, over TCP: rank 1 can reach
 * rank 0 only through the veth, so the run also proves that no rank published a loopback address.
 * Needs root and {@code ip netns}; skipped where the machine does not allow them.
 */
@Timeout(120)
class NetworkNamespaceTest {

    private final String suffix = Integer.toString(new Random().nextInt(1 << 20), 36);
    private final String nsA = "djlA" + suffix;
    private final String nsB = "djlB" + suffix;
    private final String subnet = "10.213." + new Random().nextInt(250) + ".";
    private boolean created;

    @BeforeEach
    void createHosts() throws Exception {
        assumeTrue(
                sh("ip", "netns", "add", nsA) == 0,
                "network namespaces are not available here (needs root and ip netns)");
        created = true;
        String va = "va" + suffix;
        String vb = "vb" + suffix;
        for (String[] cmd :
                new String[][] {
                    {"ip", "netns", "add", nsB},
                    {"ip", "link", "add", va, "type", "veth", "peer", "name", vb},
                    {"ip", "link", "set", va, "netns", nsA},
                    {"ip", "link", "set", vb, "netns", nsB},
                    {"ip", "-n", nsA, "addr", "add", subnet + "1/24", "dev", va},
                    {"ip", "-n", nsB, "addr", "add", subnet + "2/24", "dev", vb},
                    {"ip", "-n", nsA, "link", "set", va, "up"},
                    {"ip", "-n", nsB, "link", "set", vb, "up"},
                    {"ip", "-n", nsA, "link", "set", "lo", "up"},
                    {"ip", "-n", nsB, "link", "set", "lo", "up"}
                }) {
            assertEquals(0, sh(cmd), String.join(" ", cmd));
        }
    }

    @AfterEach
    void removeHosts() throws Exception {
        if (created) {
            sh("ip", "netns", "del", nsA);
            sh("ip", "netns", "del", nsB);
        }
    }

    @Test
    void collectivesAcrossTwoHostsOverTcp() throws Exception {
        List<Process> ranks = new ArrayList<>();
        List<Path> logs = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                Path log = Files.createTempFile("netns-rank" + r, ".log");
                logs.add(log);
                ProcessBuilder pb =
                        new ProcessBuilder(
                                "ip",
                                "netns",
                                "exec",
                                r == 0 ? nsA : nsB,
                                java(),
                                "-Xmx512m",
                                "-cp",
                                System.getProperty("java.class.path"),
                                CollectiveWorker.class.getName(),
                                "check");
                pb.environment().put("RANK", String.valueOf(r));
                pb.environment().put("WORLD_SIZE", "2");
                pb.environment().put("MASTER_ADDR", subnet + "1");
                pb.environment().put("MASTER_PORT", "29511");
                pb.environment().put("DJL_DIST_TRANSPORT", "tcp");
                pb.environment().remove("TORCHELASTIC_USE_AGENT_STORE");
                pb.redirectErrorStream(true).redirectOutput(log.toFile());
                ranks.add(pb.start());
            }
            for (int r = 0; r < 2; r++) {
                assertTrue(ranks.get(r).waitFor(90, TimeUnit.SECONDS), "rank " + r + " hung");
                String out = Files.readString(logs.get(r), StandardCharsets.UTF_8);
                assertEquals(0, ranks.get(r).exitValue(), out);
                assertTrue(out.contains("OK rank " + r + " of 2"), out);
            }
        } finally {
            for (Process p : ranks) {
                p.destroyForcibly();
            }
            for (Path log : logs) {
                Files.deleteIfExists(log);
            }
        }
    }

    private static String java() {
        return System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    }

    private static int sh(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return -1;
        }
        return p.exitValue();
    }
}
