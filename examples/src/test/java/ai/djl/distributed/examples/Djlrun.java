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

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.launch.Launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs an example as users run it, {@code bin/djlrun --nproc-per-node N TARGET ...}: a launcher JVM
 * and its workers (small, quick-starting ones unless told otherwise), bounded in time, every
 * process killed afterwards.
 */
final class Djlrun {

    /** The workers' JVM options of {@link #run}: small, quick-starting JVMs. */
    static final String WORKER_JVM = "-Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1";

    private Djlrun() {}

    /** What a run printed and how it ended. */
    record Run(int exitCode, String log) {}

    /**
     * Runs the launcher and waits at most {@code seconds} for it.
     *
     * @param dir where the combined output goes ({@code out.log})
     * @param ranks the number of workers
     * @param targetAndArgs the example name and its options
     */
    static Run run(Path dir, int ranks, int seconds, String... targetAndArgs)
            throws IOException, InterruptedException {
        return runWith(dir, ranks, seconds, WORKER_JVM, targetAndArgs);
    }

    /** As {@link #run}, with the workers' JVM options. */
    static Run runWith(
            Path dir, int ranks, int seconds, String workerJvmOptions, String... targetAndArgs)
            throws IOException, InterruptedException {
        try (Job job = start(dir, ranks, workerJvmOptions, targetAndArgs)) {
            return job.await(seconds);
        }
    }

    /**
     * Starts the launcher and returns at once, for runs of several jobs side by side.
     *
     * @param dir where the combined output goes ({@code out.log})
     * @param ranks the number of workers
     * @param workerJvmOptions the workers' JVM options
     * @param targetAndArgs the example name and its options
     * @return the running job; closing it kills the launcher and its workers
     */
    static Job start(Path dir, int ranks, String workerJvmOptions, String... targetAndArgs)
            throws IOException {
        return start(dir, ranks, workerJvmOptions, Map.of(), targetAndArgs);
    }

    /**
     * As {@link #start(Path, int, String, String...)}, with variables added to the launcher's
     * environment (after the build's own {@code DJL_DIST_*} ones are removed).
     */
    static Job start(
            Path dir,
            int ranks,
            String workerJvmOptions,
            Map<String, String> env,
            String... targetAndArgs)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command =
                new ArrayList<>(
                        List.of(
                                java,
                                "-Xmx128m",
                                "-XX:+UseSerialGC",
                                "-XX:TieredStopAtLevel=1",
                                "-cp",
                                System.getProperty("java.class.path"),
                                Launcher.class.getName(),
                                "--nproc-per-node",
                                Integer.toString(ranks),
                                "--jvm-opts",
                                workerJvmOptions));
        command.addAll(List.of(targetAndArgs));
        ProcessBuilder pb = new ProcessBuilder(command);
        // The build's own environment must not leak a launcher's settings into the workers.
        pb.environment()
                .keySet()
                .removeIf(
                        k ->
                                k.startsWith("PET_")
                                        || k.startsWith("DJL_DIST_")
                                        || k.equals("OMP_NUM_THREADS"));
        pb.environment().putAll(env);
        Path out = dir.resolve("out.log");
        pb.redirectErrorStream(true).redirectOutput(out.toFile());
        return new Job(pb.start(), out);
    }

    /**
     * A launcher started by {@link #start}; {@link #close()} kills it and every process it started.
     * Its descendants are recorded while it lives: a worker whose launcher has exited (or was
     * killed) belongs to init, and is no longer among the launcher's descendants.
     */
    static final class Job implements AutoCloseable {

        /** How long {@link #close()} waits for the killed processes to be gone. */
        private static final long CLOSE_WAIT_SECONDS = 30;

        private final Process process;
        private final Path out;
        private final Set<ProcessHandle> started = ConcurrentHashMap.newKeySet();
        private final Thread recorder;

        private Job(Process process, Path out) {
            this.process = process;
            this.out = out;
            recorder = new Thread(this::recordWhileAlive, "djlrun-recorder-" + process.pid());
            recorder.setDaemon(true);
            recorder.start();
        }

        /** Records the launcher's descendants (its workers, and theirs) until it exits. */
        private void recordWhileAlive() {
            try {
                do {
                    record();
                } while (!process.waitFor(100, TimeUnit.MILLISECONDS));
            } catch (InterruptedException e) {
                // closed: close() records once more itself
            }
        }

        private void record() {
            process.descendants().forEach(started::add);
        }

        /**
         * Waits for the launcher to exit by itself.
         *
         * @param seconds the longest wait
         * @return its exit status and output
         * @throws AssertionError with the output if it still runs by then
         */
        Run await(int seconds) throws InterruptedException {
            assertTrue(
                    process.waitFor(seconds, TimeUnit.SECONDS),
                    () -> "still running after " + seconds + " s\n" + log());
            return new Run(process.exitValue(), log());
        }

        /**
         * Waits for the output to contain a match of a pattern.
         *
         * @param pattern what to look for
         * @param seconds the longest wait
         * @return the first match
         * @throws AssertionError with the output if none comes, or the launcher exits first
         */
        Matcher awaitMatch(Pattern pattern, int seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            while (true) {
                boolean exited = !process.isAlive();
                Matcher m = pattern.matcher(log());
                if (m.find()) {
                    return m;
                }
                assertTrue(
                        !exited && System.nanoTime() - deadline < 0,
                        () -> "no match of " + pattern + " within " + seconds + " s\n" + log());
                Thread.sleep(50);
            }
        }

        /**
         * Returns what the launcher and its workers printed so far.
         *
         * @return the combined output
         */
        String log() {
            return read(out);
        }

        /**
         * Kills the launcher and every process it started that still runs (recorded while it
         * lived), and waits, bounded, for them to be gone.
         */
        @Override
        public void close() {
            recorder.interrupt();
            record();
            List<ProcessHandle> all = new ArrayList<>(started);
            all.add(process.toHandle());
            all.forEach(ProcessHandle::destroyForcibly);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CLOSE_WAIT_SECONDS);
            for (ProcessHandle h : all) {
                try {
                    h.onExit().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                } catch (ExecutionException | TimeoutException e) {
                    // it was sent SIGKILL: nothing more can be done from here
                }
            }
        }
    }

    private static String read(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8).replace('\r', '\n');
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
