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

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/** The TCP transport on its own: two ranks of one process over loopback. */
@Timeout(60)
class TcpTransportTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final OpSignature SIG = new OpSignature(OpSignature.SEND, 0, 0, 0, 1);

    private static TcpTransport[] connectPair(HashStore store) {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        CompletableFuture<TcpTransport> other =
                CompletableFuture.supplyAsync(
                        () -> TcpTransport.connect(store, 1, 2, loopback, TIMEOUT));
        TcpTransport zero = TcpTransport.connect(store, 0, 2, loopback, TIMEOUT);
        return new TcpTransport[] {zero, other.join()};
    }

    /**
     * A receive whose message is cut off mid-body (the sender aborts while writing it) fails at
     * once, naming the sender, not at the receiver's deadline; the send fails too.
     */
    @Test
    void aReceiveCutOffMidMessageFailsAtOnce() {
        try (HashStore store = new HashStore()) {
            TcpTransport[] t = connectPair(store);
            try {
                int bytes = 128 << 20; // far more than the sockets hold: the send is still writing
                ByteBuffer out = ByteBuffer.allocateDirect(bytes);
                for (int i = 0; i < bytes; i += 8) {
                    out.putLong(i, -1L);
                }
                ByteBuffer in = ByteBuffer.allocateDirect(bytes);
                long slot = Transport.p2pSlot(0, 0);
                Transfer recv = t[0].recv(1, slot, SIG, in);
                Transfer send = t[1].send(0, slot, SIG, out);
                // The receive reads straight into its buffer: once the first bytes show, the
                // receiver is mid-body. Then abort the sender.
                long deadline = System.nanoTime() + TIMEOUT.toNanos();
                while (in.get(0) == 0 && !recv.isDone() && System.nanoTime() < deadline) {
                    Thread.onSpinWait();
                }
                assertFalse(recv.isDone(), "the receive finished before it could be cut off");
                t[1].abort(new CommunicationException("test abort", -1));
                long start = System.nanoTime();
                CommunicationException e =
                        assertThrows(
                                CommunicationException.class,
                                () -> recv.await(Deadline.after(Duration.ofSeconds(30))));
                double seconds = (System.nanoTime() - start) / 1e9;
                assertTrue(seconds < 5, "failed after " + seconds + " s: " + e.getMessage());
                assertEquals(1, e.getPeerRank(), e.getMessage());
                assertThrows(
                        CommunicationException.class, () -> send.await(Deadline.after(TIMEOUT)));
            } finally {
                t[0].close();
                t[1].close();
            }
        }
    }
}
