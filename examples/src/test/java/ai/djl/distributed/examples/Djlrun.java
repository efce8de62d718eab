package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.launch.Launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs an example as users run it, {@code bin/djlrun --nproc-per-node N TARGET ...}: a launcher JVM
 * and its workers (small, quick-starting ones unless told otherwise), bounded in time, every
 * process killed afterwards.
 */
final class Djlrun {

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
        return runWith(
                dir,
                ranks,
                seconds,
                "-Xmx512m -XX:+UseSerialGC -XX:TieredStopAtLevel=1",
                targetAndArgs);
    }

    /** As {@link #run}, with the workers' JVM options. */
    static Run runWith(
            Path dir, int ranks, int seconds, String workerJvmOptions, String... targetAndArgs)
            throws IOException, InterruptedException {
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
        Path out = dir.resolve("out.log");
        pb.redirectErrorStream(true).redirectOutput(out.toFile());
        Process p = pb.start();
        try {
            assertTrue(p.waitFor(seconds, TimeUnit.SECONDS), () -> "still running\n" + read(out));
            return new Run(p.exitValue(), read(out));
        } finally {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
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
