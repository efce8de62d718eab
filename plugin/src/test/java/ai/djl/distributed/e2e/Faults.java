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
package ai.djl.distributed.e2e;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.launch.LauncherProcess;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/** What the fault suite's tests share: launching {@link FaultWorker}s and reading their output. */
final class Faults {

    /** The longest a test waits for a launcher, JVM start-ups of every attempt included. */
    static final Duration WAIT = Duration.ofSeconds(120);

    /** Worker JVMs: small and quick to start, with room for the largest arrays of the suite. */
    static final String WORKER_JVM = "-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1";

    private Faults() {}

    /**
     * Starts {@code djlrun} with the given transport and group timeout for its workers.
     *
     * @param transport {@code DJL_DIST_TRANSPORT}
     * @param timeoutMs the workers' group timeout
     * @param args the launcher's options, target and steps
     * @return the running launcher
     * @throws IOException if it cannot start
     */
    static LauncherProcess launch(String transport, long timeoutMs, String... args)
            throws IOException {
        return launch(Map.of(), transport, timeoutMs, args);
    }

    /**
     * Starts {@code djlrun} with the given transport and group timeout, and more variables, for its
     * workers.
     *
     * @param env more variables for the launcher and its workers
     * @param transport {@code DJL_DIST_TRANSPORT}
     * @param timeoutMs the workers' group timeout
     * @param args the launcher's options, target and steps
     * @return the running launcher
     * @throws IOException if it cannot start
     */
    static LauncherProcess launch(
            Map<String, String> env, String transport, long timeoutMs, String... args)
            throws IOException {
        List<String> all = new ArrayList<>(List.of("--jvm-opts", WORKER_JVM));
        all.addAll(List.of(args));
        Map<String, String> vars = new HashMap<>(env);
        vars.put("DJL_DIST_TRANSPORT", transport);
        vars.put("FAULT_TIMEOUT_MS", Long.toString(timeoutMs));
        return LauncherProcess.start(vars, all.toArray(new String[0]));
    }

    /**
     * Returns a rank's first line that starts with a word, without the launcher's prefix.
     *
     * @param out the launcher's stdout
     * @param rank the rank
     * @param word the line's first word
     * @return the line
     * @throws AssertionError if there is none
     */
    static String line(String out, int rank, String word) {
        String prefix = "[rank" + rank + "]: ";
        return out.lines()
                .filter(l -> l.startsWith(prefix + word + " "))
                .findFirst()
                .map(l -> l.substring(prefix.length()))
                .orElseThrow(
                        () ->
                                new AssertionError(
                                        "no " + word + " line of rank " + rank + " in\n" + out));
    }

    /**
     * Returns the wall-clock time of a {@code FAILED ... at EPOCH_MS: ...} line.
     *
     * @param line the line
     * @return its time, in milliseconds since the epoch
     */
    static long at(String line) {
        String after = line.substring(line.indexOf(" at ") + 4);
        return Long.parseLong(after.substring(0, after.indexOf(':')));
    }

    /**
     * Returns the milliseconds of a {@code FAILED after MS ms: ...} or {@code NEXT} line.
     *
     * @param line the line
     * @return its milliseconds
     */
    static long millis(String line) {
        String after = line.substring(line.indexOf(" after ") + 7);
        return Long.parseLong(after.substring(0, after.indexOf(" ms")));
    }

    /**
     * Counts the lines that contain a text.
     *
     * @param output the output
     * @param text the text
     * @return how many lines contain it
     */
    static long count(String output, String text) {
        return output.lines().filter(l -> l.contains(text)).count();
    }

    /**
     * Asserts that every worker the launcher started has exited, within 10 s.
     *
     * @param djlrun the launcher, which has exited
     * @throws InterruptedException if interrupted
     */
    static void assertAllExited(LauncherProcess djlrun) throws InterruptedException {
        assertAllExited(djlrun.workerPids(), Duration.ofSeconds(10), djlrun::describe);
    }

    /**
     * Asserts that processes exit within a bound.
     *
     * @param pids the processes
     * @param within the bound
     * @param describe what to report if one does not
     * @throws InterruptedException if interrupted
     */
    static void assertAllExited(Set<Long> pids, Duration within, Supplier<String> describe)
            throws InterruptedException {
        assertTrue(!pids.isEmpty(), describe);
        long deadline = System.nanoTime() + within.toNanos();
        for (long pid : pids) {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError(
                            "worker "
                                    + pid
                                    + " is still running after "
                                    + within
                                    + "\n"
                                    + describe.get());
                }
                Thread.sleep(50);
            }
        }
    }
}
