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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** The worker's watchdog, on a real worker JVM. */
@Timeout(60)
class WorkerMainTest {

    /** A worker's program that would run for a minute. */
    public static final class Sleeper {
        private Sleeper() {}

        /**
         * Sleeps.
         *
         * @param args unused
         * @throws InterruptedException never here
         */
        public static void main(String[] args) throws InterruptedException {
            Thread.sleep(60_000);
        }
    }

    /**
     * A launcher killed and left unreaped by its parent is a zombie, alive to Java: its workers
     * still see it gone and exit.
     */
    @Test
    void aWorkerWhoseLauncherIsAZombieExits() throws Exception {
        assumeTrue(Files.isDirectory(Path.of("/proc/self")), "no /proc here");
        // The background sleep's parent becomes `sleep 30`, which never collects it.
        Process parent =
                new ProcessBuilder("sh", "-c", "sleep 0.3 & echo $!; exec sleep 30")
                        .redirectErrorStream(true)
                        .start();
        Process worker = null;
        try {
            BufferedReader r =
                    new BufferedReader(
                            new InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8));
            long launcher = Long.parseLong(r.readLine().trim());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (state(launcher) != 'Z') {
                assertTrue(System.nanoTime() < deadline, "no zombie");
                Thread.sleep(20);
            }
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            worker =
                    new ProcessBuilder(
                                    java,
                                    "-cp",
                                    System.getProperty("java.class.path"),
                                    "-D" + WorkerMain.AGENT_PID_PROPERTY + "=" + launcher,
                                    WorkerMain.class.getName(),
                                    Sleeper.class.getName())
                            .redirectErrorStream(true)
                            .start();
            assertTrue(
                    worker.waitFor(20, TimeUnit.SECONDS),
                    "the worker ran on beside its zombie launcher");
            String out = new String(worker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(WorkerMain.ORPHAN_EXIT_STATUS, worker.exitValue(), out);
            assertTrue(out.contains("the launcher (pid " + launcher + ") is gone"), out);
        } finally {
            if (worker != null) {
                worker.destroyForcibly();
                worker.waitFor(10, TimeUnit.SECONDS);
            }
            parent.destroyForcibly();
            parent.waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static char state(long pid) throws java.io.IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }
}
