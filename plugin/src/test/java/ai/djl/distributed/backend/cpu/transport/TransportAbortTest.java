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

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * What {@link Transport#abort} promises every transport: once it returns, the transfers it failed
 * are done and nothing touches their buffers again, so a caller may free them. Two ranks of one
 * process.
 */
@Timeout(120)
class TransportAbortTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final OpSignature SIG = new OpSignature(OpSignature.SEND, 0, 0, 0, 1);

    private static Transport[] connectPair(String kind, HashStore store) throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        CompletableFuture<Transport> other =
                CompletableFuture.supplyAsync(() -> connect(kind, store, 1, loopback));
        Transport zero = connect(kind, store, 0, loopback);
        return new Transport[] {zero, other.get(60, TimeUnit.SECONDS)};
    }

    private static Transport connect(String kind, HashStore store, int rank, InetAddress address) {
        return switch (kind) {
            case "tcp" -> TcpTransport.connect(store, rank, 2, address, TIMEOUT);
            case "shm" -> ShmTransport.connect(store, rank, 2, TIMEOUT);
            default -> throw new IllegalArgumentException(kind);
        };
    }

    /**
     * The receiver aborts while a large message streams into its posted buffer: when abort returns,
     * the receive has failed and the buffer no longer changes. An attempt in which the whole
     * message lands before the abort (the test thread descheduled at the wrong moment) proves
     * nothing and is repeated, up to five times.
     */
    @ParameterizedTest
    @ValueSource(strings = {"tcp", "shm"})
    void onceAbortReturnsNothingWritesIntoTheBuffersItFailed(String kind) throws Exception {
        int bytes = 128 << 20; // far more than a socket or a ring holds: it streams
        ByteBuffer out = ByteBuffer.allocateDirect(bytes);
        for (int i = 0; i < bytes; i += 8) {
            out.putLong(i, 0x0101010101010101L);
        }
        ByteBuffer in = ByteBuffer.allocateDirect(bytes);
        int attempts = 0;
        while (!abortMidMessage(kind, out, in)) {
            assertTrue(++attempts < 5, "the message always landed before the abort");
        }
    }

    /** One attempt; whether the abort came while the message was still landing. */
    private static boolean abortMidMessage(String kind, ByteBuffer out, ByteBuffer in)
            throws Exception {
        for (int i = 0; i < in.capacity(); i += 8) {
            in.putLong(i, 0L);
        }
        try (HashStore store = new HashStore()) {
            Transport[] t = connectPair(kind, store);
            try {
                long slot = Transport.p2pSlot(0, 0);
                Transfer recv = t[0].recv(1, slot, SIG, in);
                t[1].send(0, slot, SIG, out);
                long deadline = System.nanoTime() + TIMEOUT.toNanos();
                while (in.get(0) == 0 && !recv.isDone() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                if (recv.isDone()) {
                    return false;
                }

                t[0].abort(new CommunicationException("test abort", -1));

                assertTrue(recv.isDone(), "abort returned while the receive was still pending");
                long written = countWritten(in);
                if (written == in.capacity()) {
                    return false; // it all landed just before the abort took
                }
                Thread.sleep(300); // long enough for the rest to land, were anything still copying
                assertEquals(written, countWritten(in), "bytes landed after abort returned");
                CommunicationException e =
                        assertThrows(
                                CommunicationException.class,
                                () -> recv.await(Deadline.after(TIMEOUT)));
                assertTrue(e.getMessage().contains("test abort"), e.getMessage());
                return true;
            } finally {
                t[0].close();
                t[1].close();
            }
        }
    }

    /**
     * The board's handshake for writes into a peer's memory: a rank between {@code beginPeerWrites}
     * and {@code endPeerWrites} is seen as writing by its peers, and a rank whose peer has aborted
     * cannot begin, so the aborted peer, once it sees the rank not writing, may hand its buffer
     * back.
     */
    @Test
    void aRankCannotBeginWritingIntoAPeerThatAborted() throws Exception {
        try (HashStore store = new HashStore()) {
            Transport[] t = connectPair("shm", store);
            try {
                ShmBoard zero = t[0].board();
                ShmBoard one = t[1].board();
                assertFalse(zero.isWritingIntoPeers(1));
                one.beginPeerWrites();
                assertTrue(zero.isWritingIntoPeers(1), "the mark is seen");
                one.endPeerWrites();
                assertFalse(zero.isWritingIntoPeers(1), "the mark is cleared");

                t[0].abort(new CommunicationException("rank 0 gave up", -1));

                CommunicationException e =
                        assertThrows(CommunicationException.class, one::beginPeerWrites);
                assertEquals(0, e.getPeerRank(), e.getMessage());
                assertTrue(e.getMessage().contains("rank 0 gave up"), e.getMessage());
                assertFalse(zero.isWritingIntoPeers(1), "a refused begin leaves no mark");
            } finally {
                t[0].close();
                t[1].close();
            }
        }
    }

    private static long countWritten(ByteBuffer in) {
        long n = 0;
        for (int i = 0; i < in.capacity(); i += 8) {
            n += Long.bitCount(in.getLong(i)); // each byte written holds one bit
        }
        return n;
    }
}
