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

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/** The TCP transport on its own: two ranks of one process over loopback. */
@Timeout(60)
class TcpTransportTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final OpSignature SIG = new OpSignature(OpSignature.SEND, 0, 0, 0, 1);

    private static TcpTransport[] connectPair(HashStore store) throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        CompletableFuture<TcpTransport> other =
                CompletableFuture.supplyAsync(
                        () -> TcpTransport.connect(store, 1, 2, loopback, TIMEOUT));
        TcpTransport zero = TcpTransport.connect(store, 0, 2, loopback, TIMEOUT);
        return new TcpTransport[] {zero, other.get(60, TimeUnit.SECONDS)};
    }

    /**
     * A receive whose message is cut off mid-body (the sender aborts while writing it) fails at
     * once, naming the sender, not at the receiver's deadline; the send fails too.
     */
    @Test
    void aReceiveCutOffMidMessageFailsAtOnce() throws Exception {
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

    /**
     * A connection that is not a rank's, made to a rank's listening port while the mesh forms (a
     * port scanner, a stray client), is dropped: one that sends nothing no longer holds the mesh up
     * until the timeout, and one that sends bytes that are not a hello, or closes at once, no
     * longer fails the group.
     */
    @ParameterizedTest
    @ValueSource(strings = {"silent", "garbage", "closed"})
    void aStrayConnectionDoesNotStopTheMesh(String stray) throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (HashStore store = new HashStore()) {
            CompletableFuture<TcpTransport> zero =
                    CompletableFuture.supplyAsync(
                            () -> TcpTransport.connect(store, 0, 2, loopback, TIMEOUT));
            store.waitFor(List.of("tcp/0"), TIMEOUT);
            String endpoint = new String(store.get("tcp/0"), StandardCharsets.UTF_8);
            int port = Integer.parseInt(endpoint.substring(endpoint.lastIndexOf(':') + 1));
            Socket s = new Socket(loopback, port);
            try {
                if (!stray.equals("silent")) {
                    OutputStream out = s.getOutputStream();
                    out.write("GET / HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                }
                if (stray.equals("closed")) {
                    s.close();
                }
                Thread.sleep(200); // rank 0 takes the stray connection first
                long start = System.nanoTime();
                TcpTransport one = TcpTransport.connect(store, 1, 2, loopback, TIMEOUT);
                TcpTransport z;
                try {
                    z = zero.get(TIMEOUT.toSeconds() + 5, TimeUnit.SECONDS);
                } finally {
                    one.close();
                }
                z.close();
                double seconds = (System.nanoTime() - start) / 1e9;
                assertTrue(seconds < 5, "the mesh took " + seconds + " s");
            } finally {
                s.close();
            }
        }
    }
}
