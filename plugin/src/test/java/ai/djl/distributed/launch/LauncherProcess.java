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

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code djlrun} in a child JVM ({@link Launcher} on the test classpath, as {@code bin/djlrun} runs
 * it), its stdout and stderr in separate files. The launcher's environment is the test's without
 * the variables the launcher reads, plus those given. {@link #close()} kills the launcher, its
 * descendants and every worker pid it printed, so no test leaves a process behind.
 */
public final class LauncherProcess implements AutoCloseable {

    /** JVM options that start small JVMs quickly, for the launcher and its workers. */
    public static final String SMALL_JVM = "-Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1";

    private static final Pattern PID = Pattern.compile("PID (\\d+)");
    private static final Pattern CHILD = Pattern.compile("CHILD (\\d+)");
    private static final List<String> SCRUBBED =
            List.of(
                    "OMP_NUM_THREADS",
                    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                    "TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE",
                    "DJL_DIST_JAVA_OPTS",
                    "DJL_DIST_CLASSPATH",
                    "GLIBC_TUNABLES");

    private final Process process;
    private final Path out;
    private final Path err;
    private final Set<Long> workerPids = new HashSet<>();

    private LauncherProcess(Process process, Path out, Path err) {
        this.process = process;
        this.out = out;
        this.err = err;
    }

    /**
     * Starts the launcher.
     *
     * @param env variables to add to its environment
     * @param args its command line
     * @return the running launcher
     * @throws IOException if it cannot be started
     */
    public static LauncherProcess start(Map<String, String> env, String... args)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java));
        command.addAll(List.of(SMALL_JVM.split(" ")));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Launcher.class.getName());
        command.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment()
                .keySet()
                .removeIf(
                        k ->
                                k.startsWith("PET_")
                                        || k.startsWith("MALLOC_")
                                        || SCRUBBED.contains(k));
        pb.environment().putAll(env);
        Path out = Files.createTempFile("djlrun-out-", ".log");
        Path err = Files.createTempFile("djlrun-err-", ".log");
        pb.redirectOutput(out.toFile()).redirectError(err.toFile());
        return new LauncherProcess(pb.start(), out, err);
    }

    /**
     * Waits for the launcher to exit.
     *
     * @param timeout the longest wait
     * @return its exit status
     * @throws AssertionError with its output if it runs longer (it is then killed)
     * @throws InterruptedException if interrupted
     */
    public int waitFor(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            String report = describe();
            close();
            throw new AssertionError("djlrun still running after " + timeout + "\n" + report);
        }
        return process.exitValue();
    }

    /**
     * Waits until stdout has a number of lines containing a text.
     *
     * @param text the text
     * @param count how many lines
     * @param timeout the longest wait
     * @throws AssertionError with the output if they do not come
     * @throws InterruptedException if interrupted
     */
    public void awaitLines(String text, int count, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (stdout().lines().filter(l -> l.contains(text)).count() < count) {
            if (System.nanoTime() - deadline >= 0 || !process.isAlive()) {
                throw new AssertionError(
                        "no "
                                + count
                                + " lines '"
                                + text
                                + "' within "
                                + timeout
                                + "\n"
                                + describe());
            }
            Thread.sleep(50);
        }
    }

    /**
     * Returns the worker pids printed so far ({@code PID n} lines).
     *
     * @return the pids
     */
    public Set<Long> workerPids() {
        Matcher m = PID.matcher(stdout());
        while (m.find()) {
            workerPids.add(Long.parseLong(m.group(1)));
        }
        return new HashSet<>(workerPids);
    }

    /**
     * Returns the launcher's process.
     *
     * @return the process
     */
    public Process process() {
        return process;
    }

    /**
     * Returns what the launcher wrote to stdout.
     *
     * @return its stdout
     */
    public String stdout() {
        return read(out);
    }

    /**
     * Returns what the launcher wrote to stderr.
     *
     * @return its stderr
     */
    public String stderr() {
        return read(err);
    }

    /**
     * Describes the launcher's state and output, for assertion messages.
     *
     * @return its exit status (if any), stdout and stderr
     */
    public String describe() {
        String status = process.isAlive() ? "running" : "exit " + process.exitValue();
        return "djlrun (" + status + ")\n--- stdout\n" + stdout() + "--- stderr\n" + stderr();
    }

    /**
     * Kills the launcher, its descendants, its workers and their process groups, and the children
     * workers reported ({@code CHILD n}: an orphan of a failed test belongs to init, no longer to
     * the launcher), if still alive; deletes the logs.
     */
    @Override
    public void close() {
        workerPids();
        List<ProcessHandle> all = new ArrayList<>();
        process.descendants().forEach(all::add);
        all.add(process.toHandle());
        for (long pid : workerPids) {
            ProcessHandle.of(pid)
                    .ifPresent(
                            h -> {
                                all.add(h);
                                all.addAll(ProcessGroups.members(h));
                            });
        }
        Matcher children = CHILD.matcher(stdout());
        while (children.find()) {
            ProcessHandle.of(Long.parseLong(children.group(1))).ifPresent(all::add);
        }
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : all) {
            try {
                h.onExit().get(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            } catch (ExecutionException | TimeoutException e) {
                // it was sent SIGKILL: nothing more can be done from here
            }
        }
        try {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        } catch (IOException e) {
            // temporary files; nothing depends on them
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
