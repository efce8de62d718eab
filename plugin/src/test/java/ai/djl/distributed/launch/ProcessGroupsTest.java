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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** Process groups read from /proc (Linux with setsid only). */
@Timeout(60)
class ProcessGroupsTest {

    /** Starts {@code command} in a group of its own; skips the test where there are none. */
    private static Process startGroup(List<String> command) throws IOException {
        List<String> wrapped = ProcessGroups.command(command);
        assumeTrue(wrapped.size() > command.size(), "no setsid and /proc here");
        return new ProcessBuilder(wrapped).redirectErrorStream(true).start();
    }

    private static Set<Long> pids(List<ProcessHandle> handles) {
        return handles.stream().map(ProcessHandle::pid).collect(Collectors.toSet());
    }

    private static char state(long pid) throws IOException {
        String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
        return stat.charAt(stat.lastIndexOf(')') + 2);
    }

    private static void kill(Process p) throws InterruptedException {
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
    }

    @Test
    void aZombieIsNeitherAMemberNorRunning() throws Exception {
        // The background `sleep` outlives the shell's exec, so no shell (dash or bash) collects
        // it; its parent is then `sleep 30`, which never collects it, as a launcher running as
        // pid 1 never collects the orphans it inherits
        Process p = startGroup(List.of("sh", "-c", "sleep 0.5 & echo $!; exec sleep 30"));
        try {
            BufferedReader r =
                    new BufferedReader(
                            new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            long zombie = Long.parseLong(r.readLine().trim());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (state(zombie) != 'Z') {
                assertTrue(System.nanoTime() < deadline, "no zombie");
                Thread.sleep(20);
            }
            ProcessHandle z = ProcessHandle.of(zombie).orElseThrow();
            assertTrue(z.isAlive()); // to Java
            assertFalse(ProcessGroups.running(z));
            assertTrue(ProcessGroups.running(p.toHandle()));
            assertEquals(Set.of(p.pid()), pids(ProcessGroups.members(p.toHandle())));
        } finally {
            kill(p);
        }
    }

    @Test
    void aCommandNameWithSpacesAndParenthesesIsRead(@TempDir Path dir) throws Exception {
        // a name that reads as a zombie of group 1 to a parser that stops at the first ')'
        Path sleep = dir.resolve("a) Z 1 1 (b");
        Files.copy(Path.of("/bin/sleep"), sleep);
        assumeTrue(sleep.toFile().setExecutable(true));
        Process p = startGroup(List.of(sleep.toString(), "30"));
        try {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!Files.readString(Path.of("/proc", Long.toString(p.pid()), "stat"))
                    .contains("(b)")) {
                assertTrue(System.nanoTime() < deadline, "not exec'd");
                Thread.sleep(20);
            }
            assertTrue(ProcessGroups.running(p.toHandle()));
            assertEquals(Set.of(p.pid()), pids(ProcessGroups.members(p.toHandle())));
        } finally {
            kill(p);
        }
    }
}
