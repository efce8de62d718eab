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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Anonymous shared memory: a segment is shared between mappings, a peer's segment is only ever
 * opened (missing, foreign or wrongly sized ones fail at once, naming the peer), and nothing ever
 * appears in {@code /dev/shm}.
 */
@Timeout(60)
class ShmSegmentsTest {

    private static final long PID = ProcessHandle.current().pid();

    @BeforeAll
    static void linux() {
        assertTrue(ShmSegments.isAvailable(), "memfd_create is expected on the test machines");
    }

    /**
     * The project's files in {@code /dev/shm} (every segment is named {@code djl-dist-...}, as
     * e2e's SharedMemoryFiles lists them): other programs' files come and go.
     */
    private static Set<String> devShm() throws IOException {
        try (Stream<Path> files = Files.list(Path.of("/dev/shm"))) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("djl-dist"))
                    .collect(Collectors.toSet());
        }
    }

    @Test
    void aSegmentIsSharedWithWhoeverOpensItAndNamesNothingOnDisk() throws Exception {
        Set<String> before = devShm();
        try (ShmSegments.Segment s = ShmSegments.create("djl-dist-test-share", 8192)) {
            assertEquals(Set.of(), minus(devShm(), before), "a segment is a file in /dev/shm");
            MappedByteBuffer peer = ShmSegments.open(3, PID, s.fd(), s.name(), 8192);
            assertEquals(0L, peer.getLong(8184), "a new segment holds zeros");
            s.buffer().putLong(4096, 0x1234_5678_9abcL);
            assertEquals(0x1234_5678_9abcL, peer.getLong(4096));
            peer.putLong(0, 42L);
            assertEquals(42L, s.buffer().getLong(0));
        }
    }

    @Test
    void aClosedSegmentIsMissingAndNamesThePeerThePathAndWhatWasExpected() throws Exception {
        ShmSegments.Segment s = ShmSegments.create("djl-dist-test-closed", 4096);
        int fd = s.fd();
        s.close();
        s.close(); // idempotent
        String m = fails(() -> ShmSegments.open(5, PID, fd, s.name(), 4096));
        assertTrue(m.startsWith("rank 5's shared memory /proc/" + PID + "/fd/" + fd), m);
        assertTrue(m.contains("is missing"), m);
        assertTrue(
                m.contains(
                        "(expected: 4096 bytes of shared memory memfd:djl-dist-test-closed"
                                + " created by rank 5 (pid "
                                + PID
                                + "))"),
                m);
        assertEquals(4096, s.buffer().capacity(), "the mapping outlives the descriptor");
    }

    @Test
    void aSegmentOfAnotherNameOrSizeIsRefused() throws Exception {
        try (ShmSegments.Segment s = ShmSegments.create("djl-dist-test-name", 4096)) {
            String other = fails(() -> ShmSegments.open(1, PID, s.fd(), "djl-dist-other", 4096));
            assertTrue(other.contains("is '/memfd:djl-dist-test-name (deleted)'"), other);
            String size = fails(() -> ShmSegments.open(1, PID, s.fd(), s.name(), 8192));
            assertTrue(size.contains("is 4096 bytes long (expected: 8192 bytes"), size);
        }
        // A descriptor that is not a segment at all: this process's standard input.
        String stdin = fails(() -> ShmSegments.open(2, PID, 0, "djl-dist-x", 4096));
        assertTrue(stdin.startsWith("rank 2's shared memory /proc/" + PID + "/fd/0 "), stdin);
    }

    @Test
    void aPeerWhoseSegmentsAreGoneFailsTheConnectAtOnceNamingIt() throws Exception {
        // What a restarted rank would read from its predecessor, had the keys survived: the
        // segments of a process that exited.
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor();
        HashStore store = new HashStore();
        store.set("shm/1", ("token " + gone.pid() + " 5 6 -1").getBytes(StandardCharsets.UTF_8));
        Set<String> before = devShm();
        long start = System.nanoTime();
        CommunicationException e =
                assertThrows(
                        CommunicationException.class,
                        () -> ShmTransport.connect(store, 0, 2, Duration.ofSeconds(30)));
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(ms < 10_000, "it waited " + ms + " ms instead of failing at once");
        assertEquals(1, e.getPeerRank());
        assertTrue(
                e.getMessage().startsWith("rank 1's shared memory /proc/" + gone.pid() + "/fd/6"),
                e.getMessage());
        assertTrue(e.getMessage().contains("is missing"), e.getMessage());
        assertEquals(Set.of(), minus(devShm(), before));
    }

    @Test
    void aMalformedAnnouncementNamesThePeerAndWhatWasExpected() {
        HashStore store = new HashStore();
        store.set("shm/1", "token 1 2".getBytes(StandardCharsets.UTF_8));
        String m = fails(() -> ShmTransport.connect(store, 0, 2, Duration.ofSeconds(30)));
        assertTrue(
                m.contains(
                        "rank 1 published 'token 1 2' under shm/1 (expected: a token, a pid"
                                + " and 3 descriptors, as numbers)"),
                m);
    }

    private static String fails(Runnable r) {
        return assertThrows(CommunicationException.class, r::run).getMessage();
    }

    private static Set<String> minus(Set<String> a, Set<String> b) {
        return a.stream().filter(x -> !b.contains(x)).collect(Collectors.toSet());
    }
}
