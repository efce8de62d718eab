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
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A group's shared memory goes when the group does, not at some later garbage collection: once its
 * transports are closed (or their set-up failed), no mapping of the project's segments is left in
 * this process, so repeated create and destroy does not pile up memory. Nothing here calls the
 * garbage collector; the segments are recognised by the project's name prefix, as {@link
 * ShmSegmentsTest} recognises files in {@code /dev/shm}.
 */
@Timeout(300)
class ShmMappingsTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @BeforeAll
    static void linux() {
        assertTrue(ShmSegments.isAvailable(), "memfd_create is expected on the test machines");
    }

    /**
     * The project's segments this process maps, by name ({@code memfd:djl-dist-<token>-...}): each
     * group's token is new, so a segment of a group made here is never in an earlier listing.
     */
    private static Set<String> mappedSegments() throws IOException {
        return Files.readAllLines(Path.of("/proc/self/maps")).stream()
                .filter(l -> l.contains("/memfd:djl-dist"))
                .map(l -> l.substring(l.indexOf("/memfd:")))
                .collect(Collectors.toSet());
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "auto"})
    void closedGroupsLeaveNoSharedMemoryMapped(String transport) throws Exception {
        Set<String> before = mappedSegments();
        for (int i = 0; i < 5; i++) {
            MultiRank.run(
                    2,
                    transport,
                    TIMEOUT,
                    (g, m) -> {
                        // Large enough for the rings (and, under auto, the direct path).
                        NDArray a = m.ones(new Shape(100_000));
                        g.allReduce(a, ReduceOp.SUM);
                        assertEquals(2f, a.getFloat(99_999));
                        g.barrier();
                        return null;
                    });
        }
        Set<String> left = mappedSegments();
        left.removeAll(before);
        assertEquals(Set.of(), left, "still mapped after every group was destroyed");
    }

    /**
     * Rank 0 creates and maps its segments, then finds rank 1's announcement malformed: the set-up
     * fails, and unmaps what it had mapped.
     */
    @Test
    void aFailedSetUpLeavesNoSharedMemoryMapped() throws Exception {
        Set<String> before = mappedSegments();
        try (HashStore store = new HashStore()) {
            store.set("shm/1", "token 1 2".getBytes(StandardCharsets.UTF_8));
            assertThrows(
                    CommunicationException.class, () -> ShmTransport.connect(store, 0, 2, TIMEOUT));
        }
        Set<String> left = mappedSegments();
        left.removeAll(before);
        assertEquals(Set.of(), left, "still mapped after the set-up failed");
    }
}
