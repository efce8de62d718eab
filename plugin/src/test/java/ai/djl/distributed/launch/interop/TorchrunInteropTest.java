package ai.djl.distributed.launch.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    // The worker's classes and the jars it needs, copied under /tmp, which the peer's root shares.
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
            } else if (name.startsWith("netty-") || name.startsWith("slf4j-")) {
                Files.copy(p, lib.resolve(name));
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
