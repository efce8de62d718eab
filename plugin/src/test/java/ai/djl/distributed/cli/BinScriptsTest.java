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
package ai.djl.distributed.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.DisabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code bin/djl-dist} and {@code bin/djlrun} pick their jar by its file name alone: a checkout
 * under a directory named like an artifact ({@code ~/resources/djl}, {@code
 * /srv/integration-tests/djl}) runs, and stale versions beside the jar are named, not guessed
 * between. The scripts run from a copy of the checkout's layout with a {@code java} ({@code JAVA})
 * that records its arguments and an {@code mvn} (first on {@code PATH}) that fails and leaves a
 * marker, so no build runs.
 */
@DisabledOnOs(OS.WINDOWS)
class BinScriptsTest {

    private static final Path REPO = repoRoot();

    @TempDir Path tmp;

    private Path tools;
    private Path javaArgs;
    private Path mvnMarker;

    /** What a script printed and how it ended. */
    record Run(int exitCode, String out, String err) {}

    @ParameterizedTest
    @ValueSource(strings = {"resources", "sources", "javadoc", "integration-tests"})
    void djlDistFindsItsJarUnderADirectoryNamedLikeAnArtifact(String dir) throws Exception {
        Path real = tmp.resolve("real/djl");
        layout(real, "plugin", "djl-distributed-plugin-1.0.jar");
        touch(real.resolve("plugin/target/djl-distributed-plugin-1.0-sources.jar"));
        touch(real.resolve("plugin/target/djl-distributed-plugin-1.0-tests.jar"));
        copyScript(real, "djl-dist");
        // reached through a symbolic link, as a checkout linked into ~/resources is
        Path root = tmp.resolve(dir).resolve("djl");
        Files.createDirectories(root.getParent());
        Files.createSymbolicLink(root, real);

        Run run = run(root.resolve("bin/djl-dist"), "--version");

        assertEquals(0, run.exitCode(), run.toString());
        assertEquals("djl-dist 1.0 (fake java)", run.out().strip(), run.toString());
        assertFalse(Files.exists(mvnMarker), "mvn ran: " + run);
        assertEquals(
                List.of(
                        "-cp",
                        root
                                + "/plugin/target/djl-distributed-plugin-1.0.jar:"
                                + root
                                + "/plugin/target/lib/*",
                        "ai.djl.distributed.cli.Main",
                        "--version"),
                javaArgs());
    }

    @ParameterizedTest
    @ValueSource(strings = {"resources", "sources", "javadoc", "integration-tests"})
    void djlrunFindsItsJarUnderADirectoryNamedLikeAnArtifact(String dir) throws Exception {
        Path root = tmp.resolve(dir).resolve("djl");
        layout(root, "examples", "djl-distributed-examples-1.0.jar");
        touch(root.resolve("examples/target/djl-distributed-examples-1.0-javadoc.jar"));
        copyScript(root, "djlrun");

        Run run = run(root.resolve("bin/djlrun"), "--help");

        assertEquals(0, run.exitCode(), run.toString());
        assertFalse(Files.exists(mvnMarker), "mvn ran: " + run);
        List<String> args = javaArgs();
        int cp = args.indexOf("-cp");
        assertTrue(cp >= 0, args.toString());
        assertEquals(
                root
                        + "/examples/target/djl-distributed-examples-1.0.jar:"
                        + root
                        + "/examples/target/lib/*",
                args.get(cp + 1));
        assertEquals(
                List.of("ai.djl.distributed.launch.Launcher", "--help"),
                args.subList(cp + 2, args.size()));
    }

    @Test
    void djlDistNamesStaleJarsInsteadOfPickingOne() throws Exception {
        Path root = tmp.resolve("djl");
        layout(root, "plugin", "djl-distributed-plugin-1.0.jar");
        touch(root.resolve("plugin/target/djl-distributed-plugin-1.1.jar"));
        touch(root.resolve("plugin/target/djl-distributed-plugin-1.1-sources.jar"));
        copyScript(root, "djl-dist");

        Run run = run(root.resolve("bin/djl-dist"), "--version");

        assertEquals(1, run.exitCode(), run.toString());
        assertTrue(run.err().contains("several plugin jars"), run.err());
        assertTrue(run.err().contains("djl-distributed-plugin-1.0.jar"), run.err());
        assertTrue(run.err().contains("djl-distributed-plugin-1.1.jar"), run.err());
        assertFalse(run.err().contains("1.1-sources.jar"), run.err());
        assertFalse(Files.exists(javaArgs), "java ran: " + run);
        assertFalse(Files.exists(mvnMarker), "mvn ran: " + run);
    }

    @Test
    void djlrunNamesStaleJarsInsteadOfPickingOne() throws Exception {
        Path root = tmp.resolve("djl");
        layout(root, "examples", "djl-distributed-examples-1.0.jar");
        touch(root.resolve("examples/target/djl-distributed-examples-1.1.jar"));
        copyScript(root, "djlrun");

        Run run = run(root.resolve("bin/djlrun"), "--help");

        assertEquals(1, run.exitCode(), run.toString());
        assertTrue(run.err().contains("several examples jars"), run.err());
        assertTrue(run.err().contains("djl-distributed-examples-1.0.jar"), run.err());
        assertTrue(run.err().contains("djl-distributed-examples-1.1.jar"), run.err());
        assertFalse(Files.exists(javaArgs), "java ran: " + run);
        assertFalse(Files.exists(mvnMarker), "mvn ran: " + run);
    }

    /**
     * bin/djl-dist's own JVM options come from DJL_DIST_CLI_JAVA_OPTS: DJL_DIST_JAVA_OPTS is
     * djlrun's workers' (--jvm-opts), and replaces djl-dist's only while the other is unset, as it
     * did before, with a note on standard error.
     */
    @Test
    void djlDistTakesItsOwnJavaOptions() throws Exception {
        Path root = tmp.resolve("djl");
        layout(root, "plugin", "djl-distributed-plugin-1.0.jar");
        copyScript(root, "djl-dist");
        Path script = root.resolve("bin/djl-dist");
        String java = tools.resolve("java").toString();

        Run run =
                run(
                        script,
                        Map.of(
                                "JAVA", java,
                                "DJL_DIST_CLI_JAVA_OPTS", "-Xmx1g -Dx=1",
                                "DJL_DIST_JAVA_OPTS", "-Xmx8g"),
                        "store-server");
        assertEquals(0, run.exitCode(), run.toString());
        assertEquals(List.of("-Xmx1g", "-Dx=1", "-cp"), javaArgs().subList(0, 3));
        assertEquals("", run.err(), run.toString());

        // as before: DJL_DIST_JAVA_OPTS alone replaces the options, and says so
        run = run(script, Map.of("JAVA", java, "DJL_DIST_JAVA_OPTS", "-Xmx8g"), "store-server");
        assertEquals(0, run.exitCode(), run.toString());
        assertEquals(List.of("-Xmx8g", "-cp"), javaArgs().subList(0, 2));
        assertTrue(run.err().contains("set DJL_DIST_CLI_JAVA_OPTS"), run.err());

        // set but empty: the store server's defaults, whatever the workers' options
        run =
                run(
                        script,
                        Map.of(
                                "JAVA", java,
                                "DJL_DIST_CLI_JAVA_OPTS", "",
                                "DJL_DIST_JAVA_OPTS", "-Xmx8g"),
                        "store-server");
        assertEquals(0, run.exitCode(), run.toString());
        List<String> args = javaArgs();
        assertEquals("-XX:TieredStopAtLevel=1", args.get(0), args.toString());
        assertFalse(args.contains("-Xmx8g"), args.toString());
        assertEquals("", run.err(), run.toString());
    }

    /** A module's target: its jar and an empty lib/; and the fake java and mvn. */
    private void layout(Path root, String module, String jar) throws IOException {
        Path target = root.resolve(module).resolve("target");
        Files.createDirectories(target.resolve("lib"));
        touch(target.resolve(jar));
        tools();
    }

    private void tools() throws IOException {
        if (tools != null) {
            return;
        }
        tools = Files.createDirectories(tmp.resolve("tools"));
        javaArgs = tmp.resolve("java-args.txt");
        mvnMarker = tmp.resolve("mvn-ran");
        script(
                tools.resolve("java"),
                "printf '%s\\n' \"$@\" > '"
                        + javaArgs
                        + "'\n"
                        + "echo 'djl-dist 1.0 (fake java)'\n");
        script(tools.resolve("mvn"), "touch '" + mvnMarker + "'\nexit 1\n");
    }

    private static void script(Path file, String body) throws IOException {
        Files.writeString(file, "#!/bin/sh\n" + body, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    private static void touch(Path file) throws IOException {
        Files.createDirectories(file.getParent());
        Files.write(file, new byte[0]);
    }

    private static void copyScript(Path root, String name) throws IOException {
        Path bin = Files.createDirectories(root.resolve("bin"));
        Files.copy(
                REPO.resolve("bin").resolve(name),
                bin.resolve(name),
                StandardCopyOption.COPY_ATTRIBUTES);
    }

    private List<String> javaArgs() throws IOException {
        return Files.readAllLines(javaArgs, StandardCharsets.UTF_8);
    }

    private Run run(Path script, String... args) throws IOException, InterruptedException {
        return run(script, Map.of("JAVA", tools.resolve("java").toString()), args);
    }

    private Run run(Path script, Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        ProcessBuilder pb =
                new ProcessBuilder(
                        Stream.concat(Stream.of(script.toString()), Stream.of(args)).toList());
        Map<String, String> e = pb.environment();
        e.keySet().removeIf(k -> k.startsWith("DJL_DIST_") || k.startsWith("DJLRUN_"));
        e.put("PATH", tools + ":" + e.getOrDefault("PATH", "/usr/bin:/bin"));
        e.putAll(env);
        Path out = tmp.resolve("out.txt");
        Path err = tmp.resolve("err.txt");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        Process p = pb.start();
        try {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), script + " still running after 60 s");
            return new Run(
                    p.exitValue(),
                    Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8));
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    /** The checkout's root: the first directory up from here that holds bin/djl-dist. */
    private static Path repoRoot() {
        for (Path p = Path.of("").toAbsolutePath(); p != null; p = p.getParent()) {
            if (Files.isRegularFile(p.resolve("bin/djl-dist"))) {
                return p;
            }
        }
        throw new IllegalStateException("no bin/djl-dist above " + Path.of("").toAbsolutePath());
    }
}
