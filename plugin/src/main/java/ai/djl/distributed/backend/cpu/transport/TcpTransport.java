package ai.djl.distributed.backend.cpu.transport;

import ai.djl.distributed.backend.CommunicationException;
import ai.djl.distributed.store.Store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link Transport} over a full mesh of TCP connections, one per pair of ranks, driven by one I/O
 * thread with a selector (as gloo's TCP pairs are driven by its device loop). Bodies are read
 * straight into the receiver's buffer when its receive is already posted, and written straight from
 * the sender's buffer: no copies on the way but the kernel's.
 *
 * <p>A peer whose connection ends without a goodbye has died: the transport fails at once and tells
 * the other peers, so every rank fails promptly, naming the dead rank.
 */
public final class TcpTransport implements Transport {

    private static final Logger logger = LoggerFactory.getLogger(TcpTransport.class);

    /** How long {@link #close()} lets queued frames and goodbyes drain. */
    private static final Duration CLOSE_DRAIN = Duration.ofSeconds(5);

    private final int rank;
    private final int size;
    private final TcpLink[] links;
    private final Selector selector;
    private final Thread ioThread;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean wakeupPending = new AtomicBoolean();
    private volatile CommunicationException failure;
    private volatile boolean stopping;
    private final AtomicBoolean closed = new AtomicBoolean();

    private TcpTransport(int rank, int size, SocketChannel[] channels, String name)
            throws IOException {
        this.rank = rank;
        this.size = size;
        this.selector = Selector.open();
        this.links = new TcpLink[size];
        for (int peer = 0; peer < size; peer++) {
            if (peer != rank) {
                links[peer] = new TcpLink(peer, channels[peer], this);
                channels[peer].configureBlocking(false);
                links[peer].register(
                        channels[peer].register(selector, SelectionKey.OP_READ, links[peer]));
            }
        }
        ioThread = new Thread(this::run, name);
        ioThread.setDaemon(true);
        ioThread.start();
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
        SocketChannel[] channels = TcpMesh.connect(store, rank, size, address, timeout);
        try {
            return new TcpTransport(rank, size, channels, "djl-dist-tcp-r" + rank);
        } catch (IOException e) {
            TcpMesh.closeAll(channels);
            throw new CommunicationException("cannot start the TCP transport: " + e, -1, e);
        }
    }

    /** {@inheritDoc} */
    @Override
    public int getRank() {
        return rank;
    }

    /** {@inheritDoc} */
    @Override
    public int getSize() {
        return size;
    }

    /** {@inheritDoc} */
    @Override
    public Transfer send(int peer, long slot, OpSignature signature, ByteBuffer data) {
        TcpLink link = link(peer);
        Transfer t = new Transfer(peer, true, signature, data.remaining());
        ByteBuffer[] frame = {
            Frame.encode(Frame.DATA, slot, signature, data.remaining()), data.duplicate()
        };
        return post(t, guarded(t, () -> link.postSend(new TcpLink.OutFrame(frame, t))));
    }

    /** {@inheritDoc} */
    @Override
    public Transfer recv(int peer, long slot, OpSignature signature, ByteBuffer into) {
        TcpLink link = link(peer);
        Transfer t = new Transfer(peer, false, signature, into.remaining());
        return post(
                t,
                guarded(t, () -> link.postRecv(new TcpLink.PostedRecv(slot, signature, into, t))));
    }

    /** {@inheritDoc} */
    @Override
    public void beginCollective(long seq, OpSignature signature) {
        run(
                () -> {
                    for (TcpLink link : links) {
                        if (link != null) {
                            link.begin(seq, signature);
                        }
                    }
                });
    }

    /** A post that fails its own transfer too when it finds a mismatch (then aborts all). */
    private static Runnable guarded(Transfer t, Runnable post) {
        return () -> {
            try {
                post.run();
            } catch (CommunicationException e) {
                t.fail(e);
                throw e;
            }
        };
    }

    /** {@inheritDoc} */
    @Override
    public CommunicationException getFailure() {
        return failure;
    }

    /** {@inheritDoc} */
    @Override
    public void abort(CommunicationException cause) {
        synchronized (this) {
            if (failure != null) {
                return;
            }
            failure = cause;
        }
        logger.debug("rank {}: transport aborted", rank, cause);
        run(() -> abortLinks(cause));
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (failure == null && ioThread.isAlive()) {
            // Goodbyes queue behind frames not yet written, so waiting for them drains the
            // links: an isend issued just before close still reaches its peer.
            List<Transfer> byes = new ArrayList<>();
            for (TcpLink link : links) {
                if (link != null) {
                    Transfer t = new Transfer(link.peer, true, new OpSignature(0, 0, 0, 0, 0), 0);
                    ByteBuffer[] frame = {
                        Frame.encode(Frame.BYE, 0, new OpSignature(0, 0, 0, 0, 0), 0)
                    };
                    byes.add(post(t, () -> link.postSend(new TcpLink.OutFrame(frame, t))));
                }
            }
            Deadline drain = Deadline.after(CLOSE_DRAIN);
            for (Transfer t : byes) {
                try {
                    t.await(drain);
                } catch (CommunicationException e) {
                    logger.debug("rank {}: goodbye to rank {} failed", rank, t.getPeer(), e);
                }
            }
        }
        stopping = true;
        selector.wakeup();
        try {
            ioThread.join(CLOSE_DRAIN.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        CommunicationException closedCause =
                new CommunicationException("the transport of rank " + rank + " is closed", -1);
        for (TcpLink link : links) {
            if (link != null) {
                link.close(closedCause);
            }
        }
        try {
            selector.close();
        } catch (IOException e) {
            logger.debug("closing the selector failed", e);
        }
    }

    void onPeerGone(CommunicationException cause, boolean orderly) {
        // A goodbye only closes that link; a connection lost without one means a dead peer,
        // which dooms every collective of this group.
        if (!orderly) {
            abort(cause);
        }
    }

    private TcpLink link(int peer) {
        if (peer < 0 || peer >= size || peer == rank) {
            throw new IllegalArgumentException(
                    "peer: "
                            + peer
                            + " (expected: a rank in [0, "
                            + size
                            + ") other than "
                            + rank
                            + ")");
        }
        return links[peer];
    }

    private Transfer post(Transfer t, Runnable command) {
        CommunicationException f = failure;
        if (f != null) {
            t.fail(f);
            return t;
        }
        if (stopping) {
            t.fail(new CommunicationException("the transport of rank " + rank + " is closed", -1));
            return t;
        }
        run(command);
        return t;
    }

    private void run(Runnable command) {
        commands.add(command);
        if (Thread.currentThread() != ioThread && wakeupPending.compareAndSet(false, true)) {
            selector.wakeup();
        }
    }

    private void run() {
        try {
            while (!stopping) {
                selector.select();
                wakeupPending.set(false);
                for (Runnable c; (c = commands.poll()) != null; ) {
                    c.run();
                }
                for (SelectionKey key : selector.selectedKeys()) {
                    if (key.isValid()) {
                        serve(key, (TcpLink) key.attachment());
                    }
                }
                selector.selectedKeys().clear();
            }
            for (Runnable c; (c = commands.poll()) != null; ) {
                c.run();
            }
        } catch (CommunicationException e) {
            abort(e);
            drainAfterAbort();
        } catch (IOException | RuntimeException | Error e) {
            abort(new CommunicationException("rank " + rank + "'s transport failed: " + e, -1, e));
            drainAfterAbort();
        }
    }

    private void serve(SelectionKey key, TcpLink link) {
        try {
            if (key.isReadable()) {
                link.onReadable();
            }
            if (key.isValid() && key.isWritable()) {
                link.flush();
            }
        } catch (IOException e) {
            throw new CommunicationException(
                    "the connection to rank " + link.peer + " failed: " + e.getMessage(),
                    link.peer,
                    e);
        } catch (IllegalStateException e) {
            throw new CommunicationException(e.getMessage(), link.peer, e);
        }
    }

    /** After the loop ends in failure, keeps failing late posts until close. */
    private void drainAfterAbort() {
        for (Runnable c; (c = commands.poll()) != null; ) {
            try {
                c.run();
            } catch (CommunicationException e) {
                // Already aborted: the command failed its own transfer; nothing more to tell.
                logger.debug("rank {}: after the abort", rank, e);
            }
        }
    }

    private void abortLinks(CommunicationException cause) {
        byte[] reason = cause.getMessage().getBytes(StandardCharsets.UTF_8);
        int n = Math.min(reason.length, Frame.MAX_REASON_BYTES);
        for (TcpLink link : links) {
            if (link == null || link.isClosed()) {
                continue;
            }
            if (link.isIdle()) {
                // Best effort, one non-blocking write: the peer then fails naming our reason
                // rather than a bare lost connection.
                ByteBuffer[] frame = {
                    Frame.encode(Frame.ABORT, 0, new OpSignature(0, 0, 0, 0, 0), n),
                    ByteBuffer.wrap(reason, 0, n)
                };
                try {
                    link.channel().write(frame);
                } catch (IOException e) {
                    logger.debug("telling rank {} of the abort failed", link.peer, e);
                }
            }
            link.close(cause);
        }
    }
}
