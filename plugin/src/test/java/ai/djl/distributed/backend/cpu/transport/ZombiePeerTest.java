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
package ai.djl.distributed.backend.cpu.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A peer whose process has exited but was not reaped (a zombie: its parent does not wait for it, or
 * is a launcher running as pid 1) reads as dead, so a rank waiting for it fails at once instead of
 * at its deadline. {@link ProcessHandle#isAlive()} counts a zombie as alive.
 *
 * <p>The zombie is a real process: a grandchild of this JVM. A child of this JVM cannot stay a
 * zombie, since the JDK reaps every process it starts (its "process reaper" thread waits for each
 * one). So {@code sh} starts {@code sleep} in the background, prints its pid, then becomes {@code
 * sleep} itself ({@code exec}), which never waits for children: once the background {@code sleep}
 * is killed, it stays a zombie until its parent ends.
 */
@Timeout(60)
class ZombiePeerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private Process parent;
    private long zombie;

    @BeforeEach
    void makeZombie() throws Exception {
        parent = new ProcessBuilder("sh", "-c", "sleep 600 & echo $!; exec sleep 600").start();
        try (BufferedReader out =
                new BufferedReader(
                        new InputStreamReader(parent.getInputStream(), StandardCharsets.UTF_8))) {
            zombie = Long.parseLong(out.readLine().trim());
        }
        long until = System.nanoTime() + TIMEOUT.toNanos();
        // Killed only once the shell has become sleep: a shell might still reap it.
        while (!parent.info().command().orElse("").endsWith("sleep")) {
            assertTrue(System.nanoTime() < until, "sh never exec'd sleep");
            Thread.sleep(5);
        }
        ProcessHandle.of(zombie).orElseThrow().destroyForcibly();
        while (state(zombie) != 'Z') {
            assertTrue(System.nanoTime() < until, "pid " + zombie + " never became a zombie");
            Thread.sleep(5);
        }
        assertTrue(
                ProcessHandle.of(zombie).map(ProcessHandle::isAlive).orElse(false),
                "the JDK counts a zombie as alive (the reason for PeerProcess)");
    }

    @AfterEach
    void reap() throws InterruptedException {
        // The zombie goes to init (or the nearest subreaper), which reaps it.
        parent.destroyForcibly();
        parent.waitFor();
    }

    @Test
    void aZombieIsNotRunning() {
        assertFalse(PeerProcess.isRunning(zombie), "pid " + zombie + " is a zombie");
        assertTrue(PeerProcess.isRunning(parent.pid()), "its parent sleeps on");
        assertTrue(PeerProcess.isRunning(ProcessHandle.current().pid()));
    }

    /**
     * Rank 0 posts on the board and waits for rank 1, whose process is the zombie: it fails within
     * a few liveness checks naming rank 1, not after its deadline.
     */
    @Test
    void aRankWaitingOnTheBoardForAZombieFailsAtOnce() throws IOException {
        try (HashStore store = new HashStore();
                ShmSegments.Segment mine =
                        ShmSegments.create("djl-dist-test-0", ShmBoard.PAGE_BYTES);
                ShmSegments.Segment theirs =
                        ShmSegments.create("djl-dist-test-1", ShmBoard.PAGE_BYTES);
                // A real transport for the board to ask about failures: rank 0 of a group of one.
                TcpTransport transport =
                        TcpTransport.connect(
                                store, 0, 1, InetAddress.getLoopbackAddress(), TIMEOUT)) {
            ShmBoard board =
                    new ShmBoard(
                            0,
                            new MappedByteBuffer[] {mine.buffer(), theirs.buffer()},
                            new long[] {ProcessHandle.current().pid(), zombie});
            OpSignature sig = new OpSignature(OpSignature.BARRIER, 0, 0, 0, 0);
            long start = System.nanoTime();
            CommunicationException e =
                    assertThrows(
                            CommunicationException.class,
                            () ->
                                    board.exchange(
                                            0,
                                            sig,
                                            ByteBuffer.allocate(0),
                                            Deadline.after(TIMEOUT),
                                            transport));
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms < 5_000, "failed after " + ms + " ms: " + e.getMessage());
            assertEquals(1, e.getPeerRank(), e.getMessage());
            assertTrue(e.getMessage().contains("pid " + zombie + ") died"), e.getMessage());
        }
    }

    /** The state letter of {@code /proc/<pid>/stat} (after the command name), or 0 once gone. */
    private static char state(long pid) throws IOException {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (NoSuchFileException e) {
            return 0;
        }
    }
}
