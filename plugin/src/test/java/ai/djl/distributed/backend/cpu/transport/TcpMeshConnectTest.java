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
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A rank whose connection to a lower rank is still pending (the lower rank's listener has a full
 * backlog, so the kernel drops the SYNs) fails with "interrupted" when its thread is interrupted,
 * and with "timed out" at its deadline: never with {@code NotYetConnectedException}, which came
 * from writing the hello on a connection that a select returning early had left unfinished.
 */
@Timeout(60)
class TcpMeshConnectTest {

    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    private ServerSocketChannel listener;
    private final List<SocketChannel> fillers = new ArrayList<>();
    private HashStore store;

    /** Announces rank 0 at a listener that never accepts, its backlog full. */
    @BeforeEach
    void announceAFullListener() throws Exception {
        listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress(LOOPBACK, 0), 1);
        // Linux queues backlog + 1 connections; later SYNs are dropped and their connect pends.
        for (int i = 0; i < 3; i++) {
            SocketChannel c = SocketChannel.open();
            c.configureBlocking(false);
            c.connect(listener.getLocalAddress());
            fillers.add(c);
        }
        Thread.sleep(200); // the handshakes of the first ones complete
        store = new HashStore();
        int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
        SetupRendezvous.TCP.announce(store, 0, LOOPBACK.getHostAddress() + ":" + port);
    }

    @AfterEach
    void close() throws IOException {
        for (SocketChannel c : fillers) {
            c.close();
        }
        listener.close();
        store.close();
    }

    @Test
    void anInterruptedConnectSaysSoAndKeepsTheInterrupt() throws Exception {
        CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
        Thread rank1 =
                new Thread(
                        () -> {
                            try {
                                TcpTransport.connect(store, 1, 2, LOOPBACK, Duration.ofSeconds(20))
                                        .close();
                                outcome.complete(null);
                            } catch (Throwable e) {
                                stillInterrupted.complete(Thread.currentThread().isInterrupted());
                                outcome.complete(e);
                            }
                        },
                        "tcp-setup-rank-1");
        rank1.setDaemon(true);
        rank1.start();
        // Interrupt only once rank 1 waits for its connection to rank 0.
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!inConnectWait(rank1)) {
            assertTrue(
                    System.nanoTime() < deadline && !outcome.isDone(),
                    "rank 1 never waited for its connection to rank 0: " + outcome);
            Thread.sleep(5);
        }
        long start = System.nanoTime();
        rank1.interrupt();

        Throwable e = outcome.get(10, TimeUnit.SECONDS);
        long ms = (System.nanoTime() - start) / 1_000_000;
        CommunicationException ce = assertInstanceOf(CommunicationException.class, e);
        assertTrue(ce.getMessage().contains("interrupted"), ce.getMessage());
        assertTrue(ms < 5_000, "failed " + ms + " ms after the interrupt");
        assertEquals(0, ce.getPeerRank(), ce.getMessage());
        assertTrue(stillInterrupted.get(), "the interrupt status was lost");
    }

    /** Whether {@code t} is waiting for a connection to a lower rank to be made. */
    private static boolean inConnectWait(Thread t) {
        boolean waiting = false;
        boolean connecting = false;
        for (StackTraceElement frame : t.getStackTrace()) {
            if (frame.getClassName().equals(TcpMesh.class.getName())) {
                waiting |= frame.getMethodName().equals("awaitOp");
                connecting |= frame.getMethodName().equals("connectTo");
            }
        }
        return waiting && connecting;
    }

    @Test
    void aConnectPendingAtTheDeadlineTimesOut() {
        Duration timeout = Duration.ofMillis(1500);
        long start = System.nanoTime();
        CommunicationException e =
                assertThrows(
                        CommunicationException.class,
                        () -> TcpTransport.connect(store, 1, 2, LOOPBACK, timeout).close());
        long ms = (System.nanoTime() - start) / 1_000_000;
        assertTrue(e.getMessage().contains("timed out after PT1.5S"), e.getMessage());
        assertTrue(ms >= 1_400 && ms < 5_000, "failed after " + ms + " ms: " + e.getMessage());
    }
}
