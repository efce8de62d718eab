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
import ai.djl.distributed.backend.AbortNotices;
import ai.djl.distributed.store.Store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link Transport} over a full mesh of TCP connections, one per pair of ranks, driven by one I/O
 * thread with a selector (as gloo's TCP pairs are driven by its device loop). Posts are direct, as
 * in gloo: the posting thread writes its frame itself, and the I/O thread writes only what the
 * socket did not take at once. Bodies are read straight into the receiver's buffer when its receive
 * is already posted, and written straight from the sender's buffer: no copies on the way but the
 * kernel's.
 *
 * <p>A peer whose connection ends without a goodbye has died: the transport fails at once and tells
 * the other peers, so every rank fails promptly, naming the dead rank.
 */
public final class TcpTransport extends LinkTransport {

    private static final Logger logger = LoggerFactory.getLogger(TcpTransport.class);

    private final Selector selector;
    private final AtomicBoolean wakeupPending = new AtomicBoolean();

    private TcpTransport(int rank, int size, SocketChannel[] channels, AbortNotices notices)
            throws IOException {
        super(rank, size, true, notices);
        this.selector = Selector.open();
        try {
            for (int peer = 0; peer < size; peer++) {
                if (peer != rank) {
                    channels[peer].configureBlocking(false);
                    SelectionKey key = channels[peer].register(selector, SelectionKey.OP_READ);
                    links[peer] = new Link(peer, new SocketLink(channels[peer], key), this);
                    key.attach(links[peer]);
                }
            }
        } catch (IOException | RuntimeException e) {
            try {
                selector.close(); // the channels are the caller's to close
            } catch (IOException ex) {
                e.addSuppressed(ex);
            }
            throw e;
        }
        start("djl-dist-tcp-r" + rank);
    }

    /**
     * Connects {@code size} ranks into a full mesh, meeting through {@code store}: each rank
     * publishes its listening address there, then connects to the lower ranks and accepts the
     * higher ones. Blocks until every connection is up.
     *
     * @param store the group's store, already namespaced for the group
     * @param rank this rank
     * @param size the number of ranks
     * @param address the local address peers should connect to
     * @param timeout how long to wait for the peers
     * @return the transport
     * @throws CommunicationException if a peer does not connect in time
     */
    public static TcpTransport connect(
            Store store, int rank, int size, InetAddress address, Duration timeout) {
        return connect(store, rank, size, address, timeout, AbortNotices.open(store, rank));
    }

    /**
     * Connects as {@link #connect(Store, int, int, InetAddress, Duration)} does, leaving and
     * reading abort reasons through the given notices (shared with another transport of the same
     * ranks).
     *
     * @param store the group's store, already namespaced for the group
     * @param rank this rank
     * @param size the number of ranks
     * @param address the local address peers should connect to
     * @param timeout how long to wait for the peers
     * @param notices this rank's abort notices in the group
     * @return the transport
     * @throws CommunicationException if a peer does not connect in time
     */
    public static TcpTransport connect(
            Store store,
            int rank,
            int size,
            InetAddress address,
            Duration timeout,
            AbortNotices notices) {
        SocketChannel[] channels = TcpMesh.connect(store, rank, size, address, timeout);
        try {
            return new TcpTransport(rank, size, channels, notices);
        } catch (IOException e) {
            TcpMesh.closeAll(channels);
            throw new CommunicationException("cannot start the TCP transport: " + e, -1, e);
        } catch (RuntimeException e) {
            TcpMesh.closeAll(channels);
            throw e;
        }
    }

    @Override
    void loop() throws IOException {
        while (!stopping) {
            selector.select();
            wakeupPending.set(false);
            runCommands();
            for (SelectionKey key : selector.selectedKeys()) {
                if (key.isValid()) {
                    serve(key, (Link) key.attachment());
                }
            }
            selector.selectedKeys().clear();
        }
    }

    @Override
    void wakeup() {
        if (wakeupPending.compareAndSet(false, true)) {
            selector.wakeup();
        }
    }

    @Override
    void release() {
        try {
            selector.close();
        } catch (IOException e) {
            logger.debug("closing the selector failed", e);
        }
    }

    private static void serve(SelectionKey key, Link link) {
        int ready;
        try {
            ready = key.readyOps();
        } catch (CancelledKeyException e) {
            return; // a posting thread closed the link since the select
        }
        try {
            link.serve((ready & SelectionKey.OP_READ) != 0, (ready & SelectionKey.OP_WRITE) != 0);
        } catch (IOException | IllegalStateException e) {
            throw linkFailure(link, e);
        }
    }

    /**
     * A socket as a {@link Link.Channel}; interest goes to its selection key. A posting thread that
     * changes it wakes the selector, which would otherwise keep watching for the old events.
     */
    private final class SocketLink implements Link.Channel {

        private final SocketChannel channel;
        private final SelectionKey key;

        SocketLink(SocketChannel channel, SelectionKey key) {
            this.channel = channel;
            this.key = key;
        }

        @Override
        public int read(ByteBuffer dst) throws IOException {
            return channel.read(dst);
        }

        @Override
        public void write(ByteBuffer[] srcs) throws IOException {
            channel.write(srcs);
        }

        @Override
        public void interest(boolean read, boolean write) {
            int ops = (read ? SelectionKey.OP_READ : 0) | (write ? SelectionKey.OP_WRITE : 0);
            try {
                if (key.interestOps() != ops) {
                    key.interestOps(ops);
                    if (Thread.currentThread() != progressThread()) {
                        wakeup();
                    }
                }
            } catch (CancelledKeyException e) {
                // The link is closing: no more events to watch.
            }
        }

        @Override
        public void close() {
            key.cancel();
            try {
                channel.close();
            } catch (IOException ignored) {
                // Closing a socket we are abandoning: nothing left to report.
            }
        }
    }
}
