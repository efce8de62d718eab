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
package ai.djl.distributed.launch.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.e2e.FaultWorker;
import ai.djl.distributed.launch.LaunchTestWorker;
import ai.djl.distributed.launch.LauncherProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The same Java worker under PyTorch 2.6's torchrun ({@code --no-python java ...}) and under
 * djlrun: the same variables with the same values (the port aside), and under torchrun a rendezvous
 * through {@code env://} on torchrun's agent store.
 */
@Timeout(300)
class TorchrunInteropTest {

    private static final Path TORCH26 =
            Path.of(System.getProperty("djl.dist.peer", "../../shared/peers/torch26"))
                    .toAbsolutePath()
                    .normalize();
    private static final String WORKER = LaunchTestWorker.class.getName();
    private static final Duration WAIT = Duration.ofSeconds(180);

    @Test
    void javaWorkersSeeTheSameVariablesUnderTorchrunAndDjlrun() throws Exception {
        assertTrue(Files.isExecutable(TORCH26), "no PyTorch peer at " + TORCH26);
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "djlrun-interop-");
        try {
            String cp = stageClasspath(dir);
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            String baseline = run(List.of(TORCH26.toString(), java, "-cp", cp, WORKER, "envkeys"));
            String torchrun =
                    run(
                            List.of(
                                    TORCH26.toString(),
                                    "torchrun",
                                    "--nproc-per-node",
                                    "2",
                                    "--master-port",
                                    Integer.toString(freePort()),
                                    "--no-python",
                                    java,
                                    "-cp",
                                    cp,
                                    WORKER,
                                    "env",
                                    "envkeys",
                                    "store"));
            Set<String> added = new HashSet<>(keys(torchrun));
            added.removeAll(keys(baseline));
            added.removeAll(LaunchTestWorker.TORCHRUN_VARIABLES);
            // the one variable djlrun leaves out: the error file of Python's @record
            assertEquals(Set.of("TORCHELASTIC_ERROR_FILE"), added, torchrun);
            for (int rank = 0; rank < 2; ++rank) {
                assertTrue(
                        torchrun.contains("STORE rank=" + rank + " world=2 saw=[from 0, from 1]"),
                        torchrun);
            }
            Map<String, Map<String, String>> underTorchrun = envByRank(torchrun);
            Map<String, Map<String, String>> underDjlrun = envByRank(djlrun());
            assertEquals(Set.of("0", "1"), underTorchrun.keySet(), torchrun);
            underTorchrun.values().forEach(e -> e.remove("MASTER_PORT"));
            underDjlrun.values().forEach(e -> e.remove("MASTER_PORT"));
            assertEquals(underTorchrun, underDjlrun);
        } finally {
            try (Stream<Path> files = Files.walk(dir)) {
                files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    /**
     * PyTorch's torchrun restarts Java workers that form a process group: attempt 1 meets on its
     * own keys ({@code /worker/attempt_1/...}) and its all-reduces, over the default transport,
     * give the right sums.
     */
    @Test
    void javaWorkersRestartUnderTorchrunAndFormTheirGroupAgain() throws Exception {
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "djlrun-interop-");
        try {
            String out =
                    torchrun(
                            dir,
                            List.of("--max-restarts", "1"),
                            List.of(
                                    javaInPeerRoot(),
                                    "-cp",
                                    stageClasspath(dir),
                                    FaultWorker.class.getName(),
                                    "allreduce:1000",
                                    "fail-first:1:3",
                                    "allreduce:7",
                                    "allreduce:300000"));
            assertEquals(2, count(out, "OK allreduce 300000"), out);
            assertEquals(1, count(out, "DONE rank 0"), out);
            assertEquals(1, count(out, "DONE rank 1"), out);
            assertTrue(out.contains("EXITING with 3"), out);
        } finally {
            delete(dir);
        }
    }

    /**
     * One torchrun job whose rank 0 is a Python process and rank 1 a Java worker: they meet in the
     * agent's store through the attempt prefix, restart once (the Python rank fails attempt 0), and
     * in attempt 1 exchange values without seeing attempt 0's keys, which the raw store shows under
     * PyTorch's exact names. PyTorch 2.6's own {@code _create_c10d_store} no longer adds the prefix
     * (2.4 dropped it) and, on this libuv-less build, cannot make the agent's client at all, so the
     * Python rank builds its store as PyTorch 1.13 to 2.3 did.
     */
    @Test
    void aPythonRankAndAJavaRankMeetUnderTorchrunThroughTheAttemptPrefix() throws Exception {
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "djlrun-interop-");
        try {
            Path python = dir.resolve("rank0.py");
            Files.writeString(python, PYTHON_RANK);
            Path dispatch = dir.resolve("rank.sh");
            Files.writeString(
                    dispatch,
                    "#!/bin/sh\n"
                            + "if [ \"$RANK\" = 0 ]; then exec python3 -u "
                            + python
                            + "; fi\n"
                            + "exec "
                            + java()
                            + " -cp '"
                            + stageClasspath(dir)
                            + "' "
                            + WORKER
                            + " env store\n");
            dispatch.toFile().setExecutable(true);
            String out =
                    torchrun(dir, List.of("--max-restarts", "1"), List.of(dispatch.toString()));
            assertTrue(
                    out.contains("PY rank=0 attempt=0 saw=['from 0', 'from 1'] earlier=[] raw=[]"),
                    out);
            assertTrue(
                    out.contains(
                            "PY rank=0 attempt=1 saw=['from 0', 'from 1'] earlier=[False]"
                                    + " raw=[True]"),
                    out);
            // The Java rank of attempt 1 saw the Python rank's value of attempt 1.
            assertTrue(out.contains("TORCHELASTIC_RESTART_COUNT=1"), out);
            assertEquals(2, count(out, "STORE rank=1 world=2 saw=[from 0, from 1]"), out);
        } finally {
            delete(dir);
        }
    }

    /** Rank 0 in Python: the agent's store as PyTorch 1.13-2.3's rendezvous gave it to a rank. */
    private static final String PYTHON_RANK =
            String.join(
                    "\n",
                    "import datetime, os, sys",
                    "from torch.distributed import PrefixStore, TCPStore",
                    "attempt = int(os.environ['TORCHELASTIC_RESTART_COUNT'])",
                    "rank, world = int(os.environ['RANK']), int(os.environ['WORLD_SIZE'])",
                    "raw = TCPStore(os.environ['MASTER_ADDR'], int(os.environ['MASTER_PORT']),"
                            + " world, False, datetime.timedelta(seconds=60), use_libuv=False)",
                    "store = PrefixStore(f'/worker/attempt_{attempt}', raw)",
                    "store.set(f'hello/{attempt}/{rank}', f'from {rank}')",
                    "saw = [store.get(f'hello/{attempt}/{r}').decode() for r in range(world)]",
                    "earlier = [store.check([f'hello/{a}/1']) for a in range(attempt)]",
                    "rawk = [raw.check([f'/worker/attempt_{a}/hello/{a}/1']) for a in"
                            + " range(attempt)]",
                    "print(f'PY rank={rank} attempt={attempt} saw={saw} earlier={earlier}"
                            + " raw={rawk}', flush=True)",
                    "sys.exit(3 if attempt == 0 else 0)",
                    "");

    private static String torchrun(Path dir, List<String> options, List<String> command)
            throws Exception {
        assertTrue(Files.isExecutable(TORCH26), "no PyTorch peer at " + TORCH26);
        List<String> all =
                new ArrayList<>(
                        List.of(
                                TORCH26.toString(),
                                "torchrun",
                                "--nproc-per-node",
                                "2",
                                "--master-port",
                                Integer.toString(freePort())));
        all.addAll(options);
        all.add("--no-python");
        all.addAll(command);
        return run(all);
    }

    private static String java() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    /**
     * A java that can load libtorch inside the peer's root: only /usr/lib/jvm is shared with it,
     * and Debian's JDK keeps its security configuration in /etc (a link out of /usr/lib/jvm),
     * without which DJL's native loading fails. The test's own JDK where it is self-contained, else
     * the first self-contained one under /usr/lib/jvm (Temurin's, on these machines).
     */
    private static String javaInPeerRoot() throws IOException {
        List<Path> homes = new ArrayList<>();
        homes.add(Path.of(System.getProperty("java.home")));
        try (Stream<Path> jvms = Files.list(Path.of("/usr/lib/jvm"))) {
            jvms.sorted().forEach(homes::add);
        }
        for (Path home : homes) {
            Path security = home.resolve("conf/security/java.security");
            if (Files.isExecutable(home.resolve("bin/java"))
                    && Files.exists(security)
                    && security.toRealPath().startsWith("/usr/lib/jvm")) {
                return home.resolve("bin/java").toString();
            }
        }
        throw new AssertionError(
                "no JDK under /usr/lib/jvm keeps its security configuration inside it: " + homes);
    }

    private static long count(String out, String text) {
        return out.lines().filter(l -> l.contains(text)).count();
    }

    private static void delete(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            files.sorted(Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
        }
    }

    private static String djlrun() throws Exception {
        try (LauncherProcess djlrun =
                LauncherProcess.start(
                        Map.of(),
                        "--nproc-per-node",
                        "2",
                        "--jvm-opts",
                        LauncherProcess.SMALL_JVM,
                        "--log-line-prefix-template",
                        "",
                        WORKER,
                        "env")) {
            assertEquals(0, djlrun.waitFor(WAIT), djlrun::describe);
            return djlrun.stdout();
        }
    }

    // ENV lines by their RANK: one per worker
    private static Map<String, Map<String, String>> envByRank(String output) {
        Map<String, Map<String, String>> out = new HashMap<>();
        for (String line : output.split("\n")) {
            if (line.startsWith("ENV ")) {
                Map<String, String> env = new HashMap<>();
                for (String kv : line.substring(4).split(" ")) {
                    int eq = kv.indexOf('=');
                    env.put(kv.substring(0, eq), kv.substring(eq + 1));
                }
                out.put(env.get("RANK"), env);
            }
        }
        return out;
    }

    private static Set<String> keys(String output) {
        Set<String> keys = new HashSet<>();
        for (String line : output.split("\n")) {
            if (line.startsWith("ENVKEYS ")) {
                keys.addAll(List.of(line.substring(8).split(" ")));
            }
        }
        return keys;
    }

    // The workers' classes and jars, under /tmp, which the peer's root shares.
    private static String stageClasspath(Path dir) throws IOException {
        String full =
                System.getProperty(
                        "surefire.test.class.path", System.getProperty("java.class.path"));
        Path lib = Files.createDirectories(dir.resolve("lib"));
        List<String> cp = new ArrayList<>();
        int n = 0;
        for (String entry : full.split(File.pathSeparator)) {
            Path p = Path.of(entry);
            String name = p.getFileName().toString();
            if (Files.isDirectory(p)) {
                Path copy = dir.resolve("classes" + n++);
                try (Stream<Path> files = Files.walk(p)) {
                    for (Path f : (Iterable<Path>) files::iterator) {
                        Path target = copy.resolve(p.relativize(f).toString());
                        if (Files.isDirectory(f)) {
                            Files.createDirectories(target);
                        } else {
                            Files.copy(f, target);
                        }
                    }
                }
                cp.add(copy.toString());
            } else if (name.endsWith(".jar") && !Files.exists(lib.resolve(name))) {
                // Linked, not copied: libtorch's jar alone is some hundreds of megabytes.
                try {
                    Files.createLink(lib.resolve(name), p);
                } catch (IOException | UnsupportedOperationException e) {
                    Files.copy(p, lib.resolve(name));
                }
            }
        }
        cp.add(lib + "/*");
        return String.join(File.pathSeparator, cp);
    }

    private static String run(List<String> command) throws Exception {
        Path log = Files.createTempFile("djlrun-interop-", ".log");
        Process p =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        try {
            if (!p.waitFor(WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(
                        command + " still running after " + WAIT + ":\n" + Files.readString(log));
            }
            String out = Files.readString(log, StandardCharsets.UTF_8);
            assertEquals(0, p.exitValue(), () -> command + " failed:\n" + out);
            return out;
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            Files.deleteIfExists(log);
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }
}
