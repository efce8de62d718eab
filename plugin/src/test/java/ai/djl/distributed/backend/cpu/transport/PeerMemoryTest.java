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
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

@Timeout(60)
class PeerMemoryTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    /** Both ranks of a group probe each other; here (same user, no Yama) both may read. */
    private static PeerMemory[] connectPair(HashStore store) throws Exception {
        CompletableFuture<PeerMemory> other =
                CompletableFuture.supplyAsync(() -> PeerMemory.connect(store, 1, 2, TIMEOUT));
        PeerMemory zero = PeerMemory.connect(store, 0, 2, TIMEOUT);
        return new PeerMemory[] {zero, other.get(60, TimeUnit.SECONDS)};
    }

    @Test
    void readsAPeersBufferAtAnOffset() throws Exception {
        try (HashStore store = new HashStore()) {
            PeerMemory[] pm = connectPair(store);
            assertNotNull(pm[0], "process_vm_readv is allowed on this machine");
            assertNotNull(pm[1]);
            ByteBuffer source = ByteBuffer.allocateDirect(3 << 20);
            for (int i = 0; i < source.capacity(); i++) {
                source.put(i, (byte) (i * 31 + 7));
            }
            ByteBuffer into = ByteBuffer.allocateDirect(2 << 20);
            into.position(5).limit(5 + (1 << 20) + 3); // reads fill remaining(), from position
            long from = PeerMemory.address(source) + 12345;
            pm[1].read(0, from, into);
            assertEquals(5, into.position(), "position unchanged");
            for (int i = 0; i < (1 << 20) + 3; i++) {
                assertEquals((byte) ((i + 12345) * 31 + 7), into.get(5 + i), "byte " + i);
            }
            assertEquals(0, into.get(4), "nothing before the position is written");
        }
    }

    @Test
    void anUnmappedAddressFailsNamingThePeer() throws Exception {
        try (HashStore store = new HashStore()) {
            PeerMemory[] pm = connectPair(store);
            ByteBuffer into = ByteBuffer.allocateDirect(64);
            CommunicationException e =
                    assertThrows(CommunicationException.class, () -> pm[0].read(1, 4096, into));
            assertEquals(1, e.getPeerRank());
            assertTrue(e.getMessage().contains("rank 1"), e.getMessage());
        }
    }

    @Test
    void aHeapBufferHasNoAddress() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> PeerMemory.address(ByteBuffer.allocate(8)));
        assertTrue(e.getMessage().contains("expected: a direct buffer"), e.getMessage());
    }
}
