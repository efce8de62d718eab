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

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.Store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * Builds the full mesh of a {@link TcpTransport}. Each rank listens on an ephemeral port and
 * publishes {@code host:port} under {@code tcp/<rank>} in the group's store; then it connects to
 * every lower rank (sending a hello: magic, its rank, the group size), accepts every higher one,
 * and waits for every rank to be done. Connecting before accepting cannot deadlock: a connection
 * completes in the listener's backlog. Every wait is bounded by the timeout, and a rank that gives
 * up tells the others (see {@link #connect}).
 *
 * <p>Thread-safe; the class holds nothing.
 */
final class TcpMesh {

    private static final Logger logger = LoggerFactory.getLogger(TcpMesh.class);

    private static final int MAGIC = 0x444A4C44; // "DJLD"
    private static final int HELLO_BYTES = 12;

    private static final SetupRendezvous RENDEZVOUS = SetupRendezvous.TCP;

    // How often a rank accepting its higher peers looks for one's failure in the store.
    private static final long VERDICT_POLL_MS = 50;

    private TcpMesh() {}

    /**
     * Builds this rank's part of the mesh. Blocks until every rank has connected its part, or one
     * has given up, for at most {@code timeout}. A rank that fails tells the others through the
     * store ({@link SetupRendezvous}) before it closes its listener: a rank waiting for its
     * address, for its connection, or for every rank to be done then fails at once naming it and
     * giving its reason, instead of waiting out {@code timeout}. Safe to call from one thread per
     * rank.
     */
    static SocketChannel[] connect(
            Store store, int rank, int size, InetAddress address, Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        SocketChannel[] channels = new SocketChannel[size];
        ServerSocketChannel server = null;
        boolean announced = false;
        try {
            server = ServerSocketChannel.open();
            server.bind(new InetSocketAddress(address, 0), size);
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            RENDEZVOUS.announce(store, rank, address.getHostAddress() + ":" + port);
            announced = true;
            for (int peer = 0; peer < rank; peer++) {
                channels[peer] = connectTo(store, peer, rank, size, deadline);
            }
            acceptHigher(store, server, channels, rank, size, deadline);
            for (SocketChannel c : channels) {
                if (c != null) {
                    c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                }
            }
            // A rank done with its part may still be needed by a peer that is not: wait for all.
            RENDEZVOUS.awaitAllDone(store, size, deadline);
            return channels;
        } catch (IOException | RuntimeException e) {
            CommunicationException failure =
                    SetupRendezvous.failure(rank, "could not connect its TCP mesh", e);
            // Told before the listener and connections close: a peer then refused, or finding its
            // connection gone, finds the reason too.
            CommunicationException thrown = RENDEZVOUS.giveUp(store, rank, announced, failure);
            closeAll(channels);
            throw thrown;
        } finally {
            if (server != null) {
                try {
                    server.close();
                } catch (IOException ignored) {
                    // The mesh is built or abandoned; the listener is not needed either way.
                }
            }
        }
    }

    static void closeAll(SocketChannel[] channels) {
        for (SocketChannel c : channels) {
            if (c != null) {
                try {
                    c.close();
                } catch (IOException ignored) {
                    // Abandoning a half-built mesh; the original failure is what matters.
                }
            }
        }
    }

    private static SocketChannel connectTo(
            Store store, int peer, int rank, int size, Deadline deadline) throws IOException {
        String endpoint = RENDEZVOUS.awaitAnnouncement(store, peer, deadline);
        int colon = endpoint.lastIndexOf(':');
        InetSocketAddress target =
                new InetSocketAddress(
                        endpoint.substring(0, colon),
                        Integer.parseInt(endpoint.substring(colon + 1)));
        SocketChannel channel = SocketChannel.open();
        try {
            channel.configureBlocking(false);
            if (!channel.connect(target)) {
                // A select may end before the connection is made (a wakeup, a wait rounded down
                // to whole milliseconds): look again until it is, or the deadline.
                while (!channel.finishConnect()) {
                    awaitOp(
                            channel,
                            SelectionKey.OP_CONNECT,
                            peer,
                            deadline,
                            "connect to " + target);
                }
            }
            ByteBuffer hello = ByteBuffer.allocate(HELLO_BYTES).order(ByteOrder.LITTLE_ENDIAN);
            hello.putInt(MAGIC).putInt(rank).putInt(size).flip();
            while (hello.hasRemaining()) {
                if (channel.write(hello) == 0) {
                    awaitOp(channel, SelectionKey.OP_WRITE, peer, deadline, "send hello");
                }
            }
            channel.configureBlocking(true);
            return channel;
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /**
     * Accepts the higher ranks, reading their hellos side by side: a connection that is not a
     * rank's (a port scanner, a stray client) is dropped, whether it sends nothing, closes, or
     * sends something else than a hello, and holds no rank up meanwhile.
     */
    private static void acceptHigher(
            Store store,
            ServerSocketChannel server,
            SocketChannel[] channels,
            int rank,
            int size,
            Deadline deadline)
            throws IOException {
        int missing = size - 1 - rank;
        if (missing == 0) {
            return;
        }
        server.configureBlocking(false);
        try (Selector selector = Selector.open()) {
            server.register(selector, SelectionKey.OP_ACCEPT);
            try {
                long nextCheck = System.nanoTime();
                while (missing > 0) {
                    // An interrupted thread's select returns at once: without this, a busy loop.
                    checkInterrupt(-1, "accept the connections of the higher ranks");
                    if (System.nanoTime() - nextCheck >= 0) {
                        // A rank that gave up will never connect: fail now, naming it.
                        RENDEZVOUS.checkVerdict(store);
                        nextCheck = System.nanoTime() + VERDICT_POLL_MS * 1_000_000;
                    }
                    long ms = deadline.remainingNanos() / 1_000_000;
                    if (ms <= 0) {
                        throw acceptTimeout(channels, rank, deadline);
                    }
                    selector.select(Math.min(ms, VERDICT_POLL_MS));
                    for (SelectionKey key : selector.selectedKeys()) {
                        if (key.isValid() && key.isAcceptable()) {
                            SocketChannel c = server.accept();
                            if (c != null) {
                                c.configureBlocking(false);
                                c.register(
                                        selector,
                                        SelectionKey.OP_READ,
                                        ByteBuffer.allocate(HELLO_BYTES)
                                                .order(ByteOrder.LITTLE_ENDIAN));
                            }
                        } else if (key.isValid() && key.isReadable()) {
                            int peer = readHello(key, rank, size);
                            if (peer >= 0 && channels[peer] != null) {
                                key.channel().close();
                                throw new CommunicationException(
                                        "rank " + peer + " connected twice to rank " + rank, peer);
                            } else if (peer >= 0) {
                                channels[peer] = (SocketChannel) key.channel();
                                missing--;
                            }
                        }
                    }
                    selector.selectedKeys().clear();
                }
            } finally {
                // Connections whose hello has not come (or never will) are not the mesh's.
                for (SelectionKey key : selector.keys()) {
                    if (key.channel() instanceof SocketChannel c && key.attachment() != null) {
                        c.close();
                    }
                }
            }
        }
    }

    /**
     * Reads what a connection sent of its hello; returns its rank once all of it is in, or -1 while
     * it is not (or when the connection, not a rank's, was dropped).
     */
    private static int readHello(SelectionKey key, int rank, int size) throws IOException {
        SocketChannel c = (SocketChannel) key.channel();
        ByteBuffer hello = (ByteBuffer) key.attachment();
        int n;
        try {
            n = c.read(hello);
        } catch (IOException e) {
            n = -1;
        }
        if (n < 0) {
            logger.warn("rank {}: dropped a connection that closed before its hello", rank);
            key.attach(null);
            key.cancel();
            c.close();
            return -1;
        }
        if (hello.hasRemaining()) {
            return -1;
        }
        key.attach(null);
        key.cancel();
        hello.flip();
        int magic = hello.getInt();
        int peer = hello.getInt();
        int peerSize = hello.getInt();
        if (magic != MAGIC) {
            logger.warn(
                    "rank {}: dropped a connection that is not a rank's (magic {})",
                    rank,
                    Integer.toHexString(magic));
            c.close();
            return -1;
        }
        if (peerSize != size || peer <= rank || peer >= size) {
            c.close();
            throw new CommunicationException(
                    "rank "
                            + rank
                            + " got a bad hello: magic "
                            + Integer.toHexString(magic)
                            + ", rank "
                            + peer
                            + ", size "
                            + peerSize
                            + " (expected: a higher rank of a group of "
                            + size
                            + ")",
                    -1);
        }
        return peer;
    }

    private static CommunicationException acceptTimeout(
            SocketChannel[] channels, int rank, Deadline deadline) {
        StringBuilder missing = new StringBuilder();
        for (int p = rank + 1; p < channels.length; p++) {
            if (channels[p] == null) {
                missing.append(missing.length() == 0 ? "" : ", ").append(p);
            }
        }
        return new CommunicationException(
                "rank "
                        + rank
                        + " timed out after "
                        + deadline.timeout()
                        + " waiting for ranks ["
                        + missing
                        + "] to connect",
                -1);
    }

    /**
     * Waits once, until {@code op} may be ready or the deadline; the caller tries again and calls
     * again until done.
     *
     * @throws CommunicationException if the deadline has passed, or the thread is interrupted (its
     *     interrupt status is kept)
     */
    private static void awaitOp(
            SocketChannel channel, int op, int peer, Deadline deadline, String what)
            throws IOException {
        // An interrupted thread's select returns at once: without this, a busy loop.
        checkInterrupt(peer, what);
        long nanos = deadline.remainingNanos();
        if (nanos <= 0) {
            throw new CommunicationException(
                    "timed out after " + deadline.timeout() + " trying to " + what, peer);
        }
        try (Selector selector = Selector.open()) {
            channel.register(selector, op);
            selector.select(Math.max(1, nanos / 1_000_000));
        }
        checkInterrupt(peer, what);
    }

    private static void checkInterrupt(int peer, String what) {
        if (Thread.currentThread().isInterrupted()) {
            throw new CommunicationException("interrupted while trying to " + what, peer);
        }
    }
}
