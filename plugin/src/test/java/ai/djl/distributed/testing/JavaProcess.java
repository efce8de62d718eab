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
package ai.djl.distributed.testing;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A child JVM running a main class from the test classpath, for multi-process tests. Its output
 * goes to a temporary file, read by {@link #output()}. {@link #close()} kills it (and its
 * descendants) if it is still running, so try-with-resources never leaks a process.
 */
public final class JavaProcess implements AutoCloseable {

    private final Process process;
    private final Path log;
    private final String name;

    private JavaProcess(Process process, Path log, String name) {
        this.process = process;
        this.log = log;
        this.name = name;
    }

    /**
     * Starts a main class of the test classpath in a new JVM.
     *
     * @param mainClass the class whose {@code main} to run
     * @param env extra environment variables
     * @param args its arguments
     * @return the running process
     * @throws IOException if it cannot be started
     */
    public static JavaProcess start(Class<?> mainClass, Map<String, String> env, String... args)
            throws IOException {
        return start(mainClass, false, env, args);
    }

    /**
     * Starts a main class of the test classpath in a new JVM that inherits no {@code DJL_DIST_*}
     * variable from the build's environment (a developer's store secret or TLS settings), so that
     * it speaks to its peers exactly as {@code env} says.
     *
     * @param mainClass the class whose {@code main} to run
     * @param env extra environment variables
     * @param args its arguments
     * @return the running process
     * @throws IOException if it cannot be started
     */
    public static JavaProcess startIsolated(
            Class<?> mainClass, Map<String, String> env, String... args) throws IOException {
        return start(mainClass, true, env, args);
    }

    private static JavaProcess start(
            Class<?> mainClass, boolean isolated, Map<String, String> env, String... args)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>();
        command.add(java);
        command.add("-Xmx256m");
        command.add("-XX:+UseSerialGC");
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        Path log = Files.createTempFile("djl-dist-child-", ".log");
        ProcessBuilder builder = new ProcessBuilder(command);
        if (isolated) {
            builder.environment().keySet().removeIf(k -> k.startsWith("DJL_DIST_"));
        }
        builder.environment().putAll(env);
        builder.redirectErrorStream(true);
        builder.redirectOutput(log.toFile());
        return new JavaProcess(builder.start(), log, mainClass.getSimpleName() + List.of(args));
    }

    /**
     * Starts a main class of the test classpath in a new JVM.
     *
     * @param mainClass the class whose {@code main} to run
     * @param args its arguments
     * @return the running process
     * @throws IOException if it cannot be started
     */
    public static JavaProcess start(Class<?> mainClass, String... args) throws IOException {
        return start(mainClass, Map.of(), args);
    }

    /**
     * Waits for the process to exit.
     *
     * @param timeout how long to wait
     * @return its exit code
     * @throws AssertionError if it is still running after the timeout (it is then killed)
     * @throws InterruptedException if interrupted
     */
    public int waitFor(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            close();
            throw new AssertionError(name + " still running after " + timeout + ":\n" + output());
        }
        return process.exitValue();
    }

    /**
     * Waits for the process to exit with status 0.
     *
     * @param timeout how long to wait
     * @throws AssertionError if it fails or runs too long, with its output
     * @throws InterruptedException if interrupted
     */
    public void assertSuccess(Duration timeout) throws InterruptedException {
        int code = waitFor(timeout);
        if (code != 0) {
            throw new AssertionError(name + " exited with " + code + ":\n" + output());
        }
    }

    /**
     * Returns everything the process printed so far.
     *
     * @return its standard output and error
     */
    public String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }

    /**
     * Returns the underlying process.
     *
     * @return the process
     */
    public Process process() {
        return process;
    }

    /** Kills the process and its descendants if they still run, and deletes the log. */
    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        File file = log.toFile();
        if (!file.delete()) {
            file.deleteOnExit();
        }
    }
}
