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
package ai.djl.distributed.interop;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A Python process inside the PyTorch peer's root ({@code torch26}), running a script the test
 * wrote under /tmp (shared with the root). {@link #close()} kills it if it still runs.
 */
final class PythonPeer implements AutoCloseable {

    private static final Path TORCH26 =
            Path.of(System.getProperty("djl.dist.peer", "../../shared/peers/torch26"))
                    .toAbsolutePath()
                    .normalize();

    private final Process process;
    private final Path script;
    private final Path log;

    private PythonPeer(Process process, Path script, Path log) {
        this.process = process;
        this.script = script;
        this.log = log;
    }

    /**
     * Starts a script.
     *
     * @param source the Python source
     * @param args its arguments
     * @return the running peer
     */
    static PythonPeer start(String source, String... args) throws IOException {
        if (!Files.isExecutable(TORCH26)) {
            throw new IllegalStateException(
                    "no PyTorch peer at "
                            + TORCH26
                            + ": run ../shared/peers/setup.sh (or pass -Ddjl.dist.peer=PATH)");
        }
        Path script = Files.createTempFile(Path.of("/tmp"), "djl-interop-", ".py");
        Files.writeString(script, source, StandardCharsets.UTF_8);
        Path log = Files.createTempFile(Path.of("/tmp"), "djl-interop-", ".log");
        List<String> command =
                new ArrayList<>(List.of(TORCH26.toString(), "python3", "-u", script.toString()));
        command.addAll(List.of(args));
        Process p =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        return new PythonPeer(p, script, log);
    }

    /**
     * Waits until the output has a line starting with a prefix, and returns the rest of it.
     *
     * @param prefix the line's start
     * @param timeout how long to wait
     * @return the rest of the line
     */
    String awaitLine(String prefix, Duration timeout) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                if (line.startsWith(prefix)) {
                    return line.substring(prefix.length()).trim();
                }
            }
            if (!process.isAlive()) {
                throw new AssertionError(
                        "python exited with "
                                + process.exitValue()
                                + " before printing '"
                                + prefix
                                + "':\n"
                                + output());
            }
            Thread.sleep(50);
        }
        throw new AssertionError(
                "no line '" + prefix + "' from python within " + timeout + ":\n" + output());
    }

    /**
     * Waits for the script to succeed.
     *
     * @param timeout how long to wait
     * @return its output
     */
    String assertSuccess(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            close();
            throw new AssertionError("python still running after " + timeout + ":\n" + output());
        }
        if (process.exitValue() != 0) {
            throw new AssertionError(
                    "python exited with " + process.exitValue() + ":\n" + output());
        }
        return output();
    }

    String output() {
        try {
            return Files.readString(log, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(no output: " + e + ")";
        }
    }

    @Override
    public void close() {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
            Files.deleteIfExists(script);
            Files.deleteIfExists(log);
        } catch (IOException | InterruptedException e) {
            // best effort: temp files in /tmp
        }
    }
}
