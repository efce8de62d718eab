package ai.djl.distributed.e2e;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.launch.LauncherProcess;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

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
        return launch(transport, timeoutMs, 0, args);
    }

    /**
     * Starts {@code djlrun} with the given transport, group timeout and linger after a failure.
     *
     * @param transport {@code DJL_DIST_TRANSPORT}
     * @param timeoutMs the workers' group timeout
     * @param lingerMs how long a failed worker waits before it exits
     * @param args the launcher's options, target and steps
     * @return the running launcher
     * @throws IOException if it cannot start
     */
    static LauncherProcess launch(String transport, long timeoutMs, long lingerMs, String... args)
            throws IOException {
        List<String> all = new ArrayList<>(List.of("--jvm-opts", WORKER_JVM));
        all.addAll(List.of(args));
        return LauncherProcess.start(
                Map.of(
                        "DJL_DIST_TRANSPORT",
                        transport,
                        "FAULT_TIMEOUT_MS",
                        Long.toString(timeoutMs),
                        "FAULT_LINGER_MS",
                        Long.toString(lingerMs)),
                all.toArray(new String[0]));
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
     * Asserts that every worker the launcher started has exited, waiting a little for stragglers.
     *
     * @param djlrun the launcher, which has exited
     * @throws InterruptedException if interrupted
     */
    static void assertAllExited(LauncherProcess djlrun) throws InterruptedException {
        Set<Long> pids = djlrun.workerPids();
        assertTrue(!pids.isEmpty(), djlrun::describe);
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        for (long pid : pids) {
            while (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                assertTrue(
                        System.nanoTime() < deadline,
                        "worker " + pid + " outlived its launcher\n" + djlrun.describe());
                Thread.sleep(50);
            }
        }
    }
}
