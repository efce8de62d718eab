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
import ai.djl.distributed.backend.AbortNotices;
import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * An all-to-all message whose size the two ranks disagree on, across {@link
 * HybridTransport#SMALL_BYTES}: the sender's goes over one transport, the receiver's receive is
 * posted on the other. The receive fails at once, naming both sizes, whichever comes first: the
 * message (found when the receive is posted) or the receive (found when the message comes). Two
 * ranks of one process, each with a real TCP and shared-memory transport. And the two transports of
 * a rank fail together: a failure of either fails what waits on the other.
 */
@Timeout(120)
class HybridTransportTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final OpSignature SIG = new OpSignature(OpSignature.ALL_TO_ALL, 0, 0, 0, 0);
    private static final int SMALL = 60 * 1024;
    private static final int LARGE = 100 * 1024;

    /** One rank's two transports, and the hybrid over them. */
    private record Rank(TcpTransport tcp, ShmTransport shm, HybridTransport hybrid) {

        static Rank connect(HashStore store, int rank) {
            AbortNotices notices = AbortNotices.open(store, rank);
            TcpTransport tcp =
                    TcpTransport.connect(
                            store, rank, 2, InetAddress.getLoopbackAddress(), TIMEOUT, notices);
            ShmTransport shm = ShmTransport.connect(store, rank, 2, TIMEOUT, notices);
            return new Rank(tcp, shm, new HybridTransport(tcp, shm, null));
        }

        /** The transport that carries a message of {@code bytes}. */
        LinkTransport carrying(int bytes) {
            return bytes > HybridTransport.SMALL_BYTES ? shm : tcp;
        }
    }

    @ParameterizedTest(name = "{0} bytes sent, {1} first")
    @CsvSource({"61440, message", "61440, receive", "102400, message", "102400, receive"})
    void aSizeTheRanksDisagreeOnFailsTheReceiveAtOnce(int sent, String first) throws Exception {
        int expected = SMALL + LARGE - sent;
        long slot = Transport.collectiveSlot(0, 0);
        try (HashStore store = new HashStore()) {
            CompletableFuture<Rank> other =
                    CompletableFuture.supplyAsync(() -> Rank.connect(store, 1));
            Rank zero = Rank.connect(store, 0);
            Rank one = other.get(60, TimeUnit.SECONDS);
            try {
                zero.hybrid().beginCollective(0, SIG);
                one.hybrid().beginCollective(0, SIG);
                ByteBuffer into = ByteBuffer.allocateDirect(expected);
                long start = System.nanoTime();
                Transfer recv;
                if (first.equals("message")) {
                    zero.hybrid().send(1, slot, SIG, ByteBuffer.allocateDirect(sent));
                    awaitTrue(() -> one.carrying(sent).links[0].arrived(slot) != null);
                    recv = one.hybrid().recv(0, slot, SIG, into);
                } else {
                    recv = one.hybrid().recv(0, slot, SIG, into);
                    // The shared-memory transport posts on its own thread: wait until it has.
                    awaitTrue(() -> one.carrying(expected).links[0].posted(slot) != null);
                    zero.hybrid().send(1, slot, SIG, ByteBuffer.allocateDirect(sent));
                }
                CommunicationException e =
                        assertThrows(
                                CommunicationException.class,
                                () -> recv.await(Deadline.after(TIMEOUT)));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < 5_000, "failed after " + ms + " ms: " + e.getMessage());
                assertEquals(0, e.getPeerRank(), e.getMessage());
                assertTrue(
                        e.getMessage().contains("expecting " + expected + " bytes"),
                        e.getMessage());
                assertTrue(e.getMessage().contains("sending " + sent + " bytes"), e.getMessage());
            } finally {
                zero.hybrid().close();
                one.hybrid().close();
            }
        }
    }

    /**
     * A lost link on one of a rank's two transports fails the receives waiting on the other at
     * once, with the loss as their cause: the hybrid is one transport to its collectives, and a
     * failure of either half dooms the group.
     */
    @ParameterizedTest(name = "{0} fails")
    @ValueSource(strings = {"tcp", "shm"})
    void aFailureOfOneHalfFailsTheOtherHalfsWaitersAtOnce(String failing) throws Exception {
        Duration wait = Duration.ofSeconds(60); // far beyond a prompt failure
        try (HashStore store = new HashStore()) {
            CompletableFuture<Rank> other =
                    CompletableFuture.supplyAsync(() -> Rank.connect(store, 1));
            Rank zero = Rank.connect(store, 0);
            Rank one = other.get(60, TimeUnit.SECONDS);
            try {
                zero.hybrid().beginCollective(0, SIG);
                one.hybrid().beginCollective(0, SIG);
                // Posted on the half that does not fail: a small receive goes over TCP, a large
                // one over shared memory.
                int bytes = failing.equals("tcp") ? LARGE : SMALL;
                Transfer recv =
                        one.hybrid()
                                .recv(
                                        0,
                                        Transport.collectiveSlot(0, 0),
                                        SIG,
                                        ByteBuffer.allocateDirect(bytes));
                LinkTransport half = failing.equals("tcp") ? one.tcp() : one.shm();
                long start = System.nanoTime();
                half.abort(new LinkLostException("the link to rank 0 failed: reset", 0, null));
                CommunicationException e =
                        assertThrows(
                                CommunicationException.class,
                                () -> recv.await(Deadline.after(wait)));
                long ms = (System.nanoTime() - start) / 1_000_000;
                assertTrue(ms < 20_000, "failed after " + ms + " ms: " + e.getMessage());
                assertTrue(
                        e.getMessage().contains("the link to rank 0 failed: reset"),
                        e.getMessage());
                assertTrue(one.tcp().getFailure() != null && one.shm().getFailure() != null);
            } finally {
                zero.hybrid().close();
                one.hybrid().close();
            }
        }
    }

    private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
        long until = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            assertTrue(System.nanoTime() < until, "the condition never held");
            Thread.sleep(1);
        }
    }
}
