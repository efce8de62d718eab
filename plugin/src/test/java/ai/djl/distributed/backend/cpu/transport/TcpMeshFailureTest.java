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
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;

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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

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
    private static final long PROMPT_MS = 5_000;
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
            Rank zero = Rank.start(() -> TcpTransport.connect(store, 0, 3, LOOPBACK, TIMEOUT));
            Rank failing = Rank.start(() -> TcpTransport.connect(store, 1, 3, elsewhere, TIMEOUT));
            Rank two = Rank.start(() -> TcpTransport.connect(store, 2, 3, LOOPBACK, TIMEOUT));

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
            Rank zero = Rank.start(() -> TcpTransport.connect(store, 0, 3, LOOPBACK, TIMEOUT));
            Rank failing = Rank.start(() -> TcpTransport.connect(store, 1, 3, LOOPBACK, TIMEOUT));
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
                Rank two = Rank.start(() -> TcpTransport.connect(store, 2, 3, LOOPBACK, TIMEOUT));
                assertFailedPromptlyBecauseOf(two, 1, cause);
            }
        }
    }

    private static void assertFailedPromptlyBecauseOf(
            Rank peer, int culprit, RuntimeException cause) throws Exception {
        CommunicationException e = peer.failure();
        long ms = peer.elapsedMs();
        assertTrue(ms < PROMPT_MS, "a peer failed after " + ms + " ms, not at once: " + e);
        assertEquals(culprit, e.getPeerRank(), e.getMessage());
        assertTrue(e.getMessage().contains("rank " + culprit), e.getMessage());
        assertTrue(
                e.getMessage().contains(cause.getMessage()),
                "a peer does not give rank " + culprit + "'s reason: " + e);
    }

    /** One rank's set-up on its own thread, which closes the transport should it connect. */
    private static final class Rank {

        final CompletableFuture<Void> done = new CompletableFuture<>();
        final long start = System.nanoTime();
        volatile long end;

        static Rank start(Connect connect) {
            Rank r = new Rank();
            Thread t =
                    new Thread(
                            () -> {
                                try {
                                    Transport transport = connect.run();
                                    r.end = System.nanoTime();
                                    transport.close();
                                    r.done.complete(null);
                                } catch (Throwable e) {
                                    r.end = System.nanoTime();
                                    r.done.completeExceptionally(e);
                                }
                            },
                            "tcp-setup-rank");
            t.setDaemon(true);
            t.start();
            return r;
        }

        /** The rank's failure, which must be a {@link CommunicationException}. */
        CommunicationException failure() throws Exception {
            try {
                done.get(TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
            } catch (ExecutionException e) {
                if (e.getCause() instanceof CommunicationException ce) {
                    return ce;
                }
                throw new AssertionError("a rank failed otherwise", e.getCause());
            }
            return fail("a rank connected");
        }

        long elapsedMs() {
            return (end - start) / 1_000_000;
        }
    }

    /** A rank's connect. */
    private interface Connect {
        Transport run();
    }
}
