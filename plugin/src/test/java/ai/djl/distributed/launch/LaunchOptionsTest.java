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
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Parsing and validating djlrun's command line, and the launcher's answers to bad usage. */
class LaunchOptionsTest {

    private static LaunchOptions parse(String... args) {
        return LaunchOptions.parse(List.of(args), Map.of());
    }

    private static String fails(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> parse(args)).getMessage();
    }

    /** Launchers beat once per poll, at most once a second: a timeout of under two beats fails. */
    @Test
    void aHeartbeatTimeoutShorterThanTwoBeatsIsRefused() {
        assertEquals(
                "--heartbeat-timeout: 5 s with --monitor-interval 5 s (expected: at least two"
                        + " heartbeats, 10 s: a launcher beats once per interval, at most once a"
                        + " second)",
                fails("--nnodes", "2", "--heartbeat-timeout", "5", "--monitor-interval", "5", "x"));
        assertTrue(
                fails("--nnodes", "2", "--heartbeat-timeout", "1.5", "x")
                        .startsWith("--heartbeat-timeout: 1.5 s with --monitor-interval 0.1 s"));
        // One node has no heartbeats; two beats of a second each are enough.
        assertEquals(
                Duration.ofSeconds(5),
                parse("--heartbeat-timeout", "5", "--monitor-interval", "5", "x")
                        .heartbeatTimeout());
        assertEquals(
                Duration.ofSeconds(2),
                parse("--nnodes", "2", "--node-rank", "0", "--heartbeat-timeout", "2", "x")
                        .heartbeatTimeout());
    }

    @Test
    void nprocPerNodeTakesTorchrunsWords() {
        int cores = Runtime.getRuntime().availableProcessors();
        int gpus = GpuCount.visible();
        assertEquals(cores, parse("--nproc-per-node", "cpu", "x.Main").nprocPerNode());
        assertEquals(
                gpus > 0 ? gpus : cores,
                parse("--nproc-per-node", "auto", "x.Main").nprocPerNode());
        if (gpus > 0) {
            assertEquals(gpus, parse("--nproc-per-node", "gpu", "x.Main").nprocPerNode());
        } else {
            String m = fails("--nproc-per-node", "gpu", "x.Main");
            assertTrue(m.contains("gpu") && m.contains("CUDA sees none here"), m);
        }
        String m = fails("--nproc-per-node", "gpus", "x.Main");
        assertTrue(m.contains("a positive integer, gpu, auto or cpu"), m);
    }

    @Test
    void anAtFileReachesTheWorkersAsTyped(@TempDir Path dir) throws Exception {
        // picocli's default would replace it by the file's contents, on any part of the line
        Path file = Files.writeString(dir.resolve("args.txt"), "--secret-flag value");
        LaunchOptions o = parse("--nproc-per-node", "2", "x.Main", "@" + file, "--", "x");
        assertEquals(List.of("@" + file, "--", "x"), o.targetArgs());
        assertEquals(2, o.nprocPerNode());
    }

    @Test
    void defaultsAreTorchrunsForOneNode() {
        LaunchOptions o = parse("com.example.Train", "--epochs", "3");
        assertEquals("com.example.Train", o.target());
        assertEquals(List.of("--epochs", "3"), o.targetArgs());
        assertEquals(1, o.nprocPerNode());
        assertEquals(1, o.nnodes());
        assertEquals(-1, o.nodeRank());
        assertEquals("127.0.0.1", o.masterAddr());
        assertEquals(0, o.masterPort()); // a free port, on one node
        assertNull(o.rdzvEndpoint());
        assertEquals("none", o.rdzvId());
        assertEquals(Duration.ofSeconds(600), o.rdzvTimeout());
        assertEquals(0, o.maxRestarts());
        assertEquals(Duration.ofSeconds(30), o.heartbeatTimeout());
        assertEquals(Duration.ofMillis(100), o.monitorInterval());
        assertEquals(Duration.ofSeconds(30), o.termTimeout());
        assertEquals("default", o.role());
        assertEquals(List.of(), o.jvmOpts());
        assertNull(o.classpath());
        assertEquals("[rank${rank}]: ", o.logLinePrefixTemplate());
    }

    @Test
    void everyOptionInEveryForm() {
        LaunchOptions o =
                parse(
                        "--nproc_per_node=4",
                        "--nnodes",
                        "3:3",
                        "--node-rank",
                        "2",
                        "--master-addr",
                        "node0",
                        "--master_port",
                        "29501",
                        "--rdzv-id=job7",
                        "--rdzv-timeout",
                        "2.5",
                        "--max-restarts",
                        "3",
                        "--heartbeat-timeout",
                        "4",
                        "--monitor-interval",
                        "0.5",
                        "--term-timeout",
                        "5",
                        "--role",
                        "trainer",
                        "--jvm-opts",
                        " -Xmx1g  -Dx=y ",
                        "--classpath",
                        "a.jar:lib/*",
                        "--log-line-prefix-template",
                        "${role_name}${local_rank}| ",
                        "--",
                        "--not-an-option");
        assertEquals(4, o.nprocPerNode());
        assertEquals(3, o.nnodes());
        assertEquals(2, o.nodeRank());
        assertEquals("node0", o.masterAddr());
        assertEquals(29501, o.masterPort());
        assertEquals("job7", o.rdzvId());
        assertEquals(Duration.ofMillis(2500), o.rdzvTimeout());
        assertEquals(3, o.maxRestarts());
        assertEquals(Duration.ofSeconds(4), o.heartbeatTimeout());
        assertEquals(Duration.ofMillis(500), o.monitorInterval());
        assertEquals(Duration.ofSeconds(5), o.termTimeout());
        assertEquals("trainer", o.role());
        assertEquals(List.of("-Xmx1g", "-Dx=y"), o.jvmOpts());
        assertEquals("a.jar:lib/*", o.classpath());
        assertEquals("${role_name}${local_rank}| ", o.logLinePrefixTemplate());
        assertEquals("--not-an-option", o.target());
    }

    @Test
    void optionsComeFromTorchrunsVariablesWhenTheCommandLineLacksThem() {
        Map<String, String> env =
                Map.of(
                        "PET_NNODES", "2",
                        "PET_NODE_RANK", "1",
                        "PET_NPROC_PER_NODE", "2",
                        "PET_MASTER_ADDR", "head",
                        "DJL_DIST_JAVA_OPTS", "-Xmx2g",
                        "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE", "");
        LaunchOptions o = LaunchOptions.parse(List.of("--nproc-per-node", "3", "x.Main"), env);
        assertEquals(3, o.nprocPerNode()); // the command line wins
        assertEquals(2, o.nnodes());
        assertEquals(1, o.nodeRank());
        assertEquals("head", o.masterAddr());
        assertEquals(LaunchOptions.DEFAULT_MULTI_NODE_PORT, o.masterPort());
        assertEquals(List.of("-Xmx2g"), o.jvmOpts());
        assertEquals("[rank${rank}]: ", o.logLinePrefixTemplate()); // empty means unset
        assertEquals(
                "$PET_NNODES: 'two' (expected: a positive integer)",
                assertThrows(
                                IllegalArgumentException.class,
                                () ->
                                        LaunchOptions.parse(
                                                List.of("x.Main"), Map.of("PET_NNODES", "two")))
                        .getMessage());
    }

    @Test
    void badValuesAreNamedWithWhatWasExpected() {
        assertEquals(
                "--nproc-per-node: 'zero' (expected: a positive integer, gpu, auto or cpu)",
                fails("--nproc-per-node", "zero", "x.Main"));
        assertEquals(
                "--nproc-per-node: '0' (expected: a positive integer, gpu, auto or cpu)",
                fails("--nproc-per-node=0", "x.Main"));
        assertEquals(
                "--nnodes: '1:4' (expected: a positive integer; elastic ranges MIN:MAX are not"
                        + " supported)",
                fails("--nnodes", "1:4", "x.Main"));
        assertEquals(
                "--nnodes: '-2' (expected: a positive integer)", fails("--nnodes=-2", "x.Main"));
        assertEquals(
                "--master-port: '70000' (expected: an integer from 0 to 65535)",
                fails("--master-port", "70000", "x.Main"));
        assertEquals(
                "--max-restarts: '-1' (expected: an integer, at least 0)",
                fails("--max-restarts", "-1", "x.Main"));
        assertEquals(
                "--rdzv-timeout: '0' (expected: a positive number of seconds, at most 31536000 (a"
                        + " year))",
                fails("--rdzv-timeout", "0", "x.Main"));
        // positive, beyond the limit: the message states the limit (365 * 24 * 3600 s)
        assertEquals(
                "--rdzv-timeout: '1e9' (expected: a positive number of seconds, at most 31536000"
                        + " (a year))",
                fails("--rdzv-timeout", "1e9", "x.Main"));
        assertEquals(
                "--term-timeout: '40000000' (expected: a positive number of seconds, at most"
                        + " 31536000 (a year))",
                fails("--term-timeout", "40000000", "x.Main"));
        assertEquals(
                Duration.ofDays(365), parse("--rdzv-timeout", "31536000", "x.Main").rdzvTimeout());
        assertEquals(
                "--rdzv-endpoint: 'node0' (expected: HOST:PORT, e.g. node0:29400)",
                fails("--rdzv-endpoint", "node0", "x.Main"));
        assertEquals(
                "--rdzv-endpoint: 'node0:0' (expected: HOST:PORT with a port from 1 to 65535)",
                fails("--rdzv-endpoint", "node0:0", "x.Main"));
        assertEquals(
                new Endpoint("::1", 29400),
                parse("--rdzv-endpoint", "[::1]:29400", "x.Main").rdzvEndpoint());
    }

    @Test
    void inconsistentOptionsAreRefused() {
        assertTrue(fails("--nnodes", "2", "x.Main").startsWith("--node-rank: missing (expected:"));
        assertEquals(
                "--node-rank: 2 (expected: 0 to 1, below --nnodes 2)",
                fails("--nnodes", "2", "--node-rank", "2", "x.Main"));
        assertTrue(
                fails("--nnodes", "2", "--node-rank", "1", "--master-port", "0", "x.Main")
                        .startsWith("--master-port: 0 (expected: 1 to 65535 with --nnodes 2"));
        assertEquals(
                "--standalone: runs one node, but --nnodes is 2 (expected: no --nnodes above 1 and"
                        + " no --rdzv-endpoint)",
                fails("--standalone", "--nnodes", "2", "x.Main"));
        // a value of the environment is named as such
        assertEquals(
                "--standalone: runs one node, but $PET_NNODES is 2 (expected: no $PET_NNODES above"
                        + " 1 and no --rdzv-endpoint)",
                assertThrows(
                                IllegalArgumentException.class,
                                () ->
                                        LaunchOptions.parse(
                                                List.of("--standalone", "x.Main"),
                                                Map.of("PET_NNODES", "2")))
                        .getMessage());
        assertEquals(
                "--standalone: runs one node, but --rdzv-endpoint is h:1 (expected: no --nnodes"
                        + " above 1 and no --rdzv-endpoint)",
                fails("--standalone", "--rdzv-endpoint", "h:1", "x.Main"));
        // with a rendezvous endpoint, node ranks are given in joining order
        assertEquals(-1, parse("--nnodes", "2", "--rdzv-endpoint", "h:1", "x.Main").nodeRank());
    }

    /**
     * torchrun (argparse) takes the last value of a repeated option: wrapper scripts rely on it.
     */
    @Test
    void aRepeatedOptionTakesItsLastValueAsTorchrun() {
        LaunchOptions o =
                parse(
                        "--nproc-per-node",
                        "2",
                        "--max_restarts=1",
                        "--nproc_per_node=4",
                        "--max-restarts",
                        "3",
                        "--standalone",
                        "--standalone",
                        "x.Main");
        assertEquals(4, o.nprocPerNode());
        assertEquals(3, o.maxRestarts());
        // the command line's last value wins over the variable too
        LaunchOptions fromBoth =
                LaunchOptions.parse(
                        List.of("--nnodes", "1", "--nnodes", "2", "--node-rank", "1", "x.Main"),
                        Map.of("PET_NNODES", "3"));
        assertEquals(2, fromBoth.nnodes());
    }

    @Test
    void usageErrorsAreClear() {
        assertTrue(
                fails().startsWith(
                                "missing TARGET (expected: a main class, or one of the examples"
                                        + " ddp_basics, fsdp_basics, transformer_basics,"
                                        + " replica_groups)"));
        assertTrue(fails("--nnodes", "1").startsWith("missing TARGET"));
        assertTrue(
                fails("--bogus", "1", "x.Main")
                        .startsWith("unknown option --bogus (expected one of --nproc-per-node,"));
        assertTrue(fails("-x", "x.Main").startsWith("unknown option -x"));
        assertEquals(
                "--max-restarts: missing value (expected: --max-restarts VALUE)",
                fails("--max-restarts"));
        assertEquals(
                "--standalone: takes no value (got 'yes')", fails("--standalone=yes", "x.Main"));
    }

    @Test
    void targetsAreExamplesOrMainClasses() {
        assertEquals("ai.djl.distributed.examples.DdpBasics", Targets.mainClass("ddp_basics"));
        assertEquals("ai.djl.distributed.examples.FsdpBasics", Targets.mainClass("fsdp_basics"));
        assertEquals(
                "ai.djl.distributed.examples.TransformerBasics",
                Targets.mainClass("transformer_basics"));
        assertEquals(
                "ai.djl.distributed.examples.ReplicaGroups", Targets.mainClass("replica_groups"));
        assertEquals("com.example.Train", Targets.mainClass("com.example.Train"));
        // a class in the default package; whether it exists is checked on the classpath
        assertEquals("ddp_basic", Targets.mainClass("ddp_basic"));
        String neither =
                assertThrows(IllegalArgumentException.class, () -> Targets.mainClass("ddp-basics"))
                        .getMessage();
        assertEquals(
                "TARGET: 'ddp-basics' is neither an example nor a class name (expected: one of the"
                        + " examples ddp_basics, fsdp_basics, transformer_basics, replica_groups,"
                        + " or a class with public static void main(String[]) on --classpath,"
                        + " $DJL_DIST_CLASSPATH or the launcher's classpath, such as"
                        + " com.example.Train, or Train in the default package)",
                neither);
        assertThrows(IllegalArgumentException.class, () -> Targets.mainClass("com.9bad.Main"));
    }

    @Test
    void theLauncherAnswersHelpAndBadUsageWithoutStartingAnything() {
        assertEquals(0, run("--help").status);
        assertTrue(run("-h").out.contains("--nproc-per-node N"));
        Result bad = run("--nproc-per-node", "x", LaunchTestWorker.class.getName());
        assertEquals(2, bad.status);
        assertTrue(bad.err.startsWith("djlrun: --nproc-per-node: 'x' (expected:"), bad.err);
        Result missing = run("com.example.NoSuchMain");
        assertEquals(2, missing.status);
        assertTrue(
                missing.err.contains(
                        "main class com.example.NoSuchMain not found on the workers' classpath"),
                missing.err);
        assertTrue(missing.err.contains("ddp_basics, fsdp_basics, transformer_basics"));
        Result example = run("fsdp_basics");
        assertEquals(2, example.status);
        assertTrue(
                example.err.contains(
                        "example 'fsdp_basics' needs ai.djl.distributed.examples.FsdpBasics,"
                                + " which is not on the workers' classpath"),
                example.err);
        Result noMain = run(LaunchOptionsTest.class.getName());
        assertTrue(noMain.err.contains("has no public static void main(String[])"), noMain.err);
        assertFalse(run("--help").out.isEmpty());
    }

    /** How an in-process launcher run ended and what it printed. */
    record Result(int status, String out, String err) {}

    /** Runs the launcher in this JVM with an empty environment, as {@code djlrun args}. */
    static Result run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int status =
                Launcher.run(
                        List.of(args),
                        Map.of(),
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Result(
                status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }
}
