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

import static ai.djl.distributed.testing.SetupRank.assertFailedPromptlyBecauseOf;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.testing.SetupRank;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * A rank whose TCP mesh set-up fails, and which stays alive, fails its peers' set-up at once with
 * its reason, whether it failed before publishing its address or after; none waits out the group's
 * timeout. Three ranks of one process over loopback on one real {@link HashStore}, each on its own
 * thread; the failures are real ones.
 */
@Timeout(120)
class TcpMeshFailureTest {

    // Long enough that a peer waiting it out is told apart from one failing at once.
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    /**
     * Rank 1 cannot listen (its address, in TEST-NET-1, is not this host's), so it never publishes
     * its address: rank 2, waiting for that address, and rank 0, waiting for rank 1 to connect,
     * fail at once naming it.
     */
    @Test
    void aRankThatCannotListenFailsItsPeersAtOnce() throws Exception {
        try (HashStore store = new HashStore()) {
            InetAddress elsewhere = InetAddress.getByName("192.0.2.1");
            SetupRank zero = start(0, () -> TcpTransport.connect(store, 0, 3, LOOPBACK, TIMEOUT));
            SetupRank failing =
                    start(1, () -> TcpTransport.connect(store, 1, 3, elsewhere, TIMEOUT));
            SetupRank two = start(2, () -> TcpTransport.connect(store, 2, 3, LOOPBACK, TIMEOUT));

            CommunicationException cause = failing.failure();
            assertTrue(cause.getMessage().contains("rank 1 could not connect"), cause.getMessage());
            assertFailedPromptlyBecauseOf(zero, 1, cause);
            assertFailedPromptlyBecauseOf(two, 1, cause);
        }
    }

    /**
     * Rank 1 publishes its address, connects to rank 0, then fails on a bad hello (a client
     * claiming to be rank 2 of a group of 5): rank 0, waiting for rank 2 to connect, fails at once
     * naming rank 1, and so does rank 2 when it comes.
     */
    @Test
    void aRankThatFailsAfterPublishingFailsItsPeersAtOnce() throws Exception {
        try (HashStore store = new HashStore()) {
            SetupRank zero = start(0, () -> TcpTransport.connect(store, 0, 3, LOOPBACK, TIMEOUT));
            SetupRank failing =
                    start(1, () -> TcpTransport.connect(store, 1, 3, LOOPBACK, TIMEOUT));
            store.waitFor(List.of("tcp/1"), TIMEOUT);
            String endpoint = new String(store.get("tcp/1"), StandardCharsets.UTF_8);
            int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            try (Socket s = new Socket(LOOPBACK, port)) {
                ByteBuffer hello = ByteBuffer.allocate(12).order(ByteOrder.LITTLE_ENDIAN);
                hello.putInt(0x444A4C44).putInt(2).putInt(5);
                OutputStream out = s.getOutputStream();
                out.write(hello.array());
                out.flush();

                CommunicationException cause = failing.failure();
                assertTrue(cause.getMessage().contains("bad hello"), cause.getMessage());
                assertFailedPromptlyBecauseOf(zero, 1, cause);
                SetupRank two =
                        start(2, () -> TcpTransport.connect(store, 2, 3, LOOPBACK, TIMEOUT));
                assertFailedPromptlyBecauseOf(two, 1, cause);
            }
        }
    }

    /** One rank's set-up on its own thread, which closes the transport should it connect. */
    private static SetupRank start(int rank, Callable<Transport> connect) {
        return SetupRank.start("tcp-setup", rank, TIMEOUT, "connected", connect);
    }
}
