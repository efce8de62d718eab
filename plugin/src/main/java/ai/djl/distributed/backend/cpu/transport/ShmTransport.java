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

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link Transport} between ranks of one host through shared memory: one {@link ShmRing} per
 * direction per pair, and one page per rank of a {@link ShmBoard} for small collectives, in
 * anonymous segments ({@link ShmSegments}) that no file system names, so nothing is left behind,
 * even after a crash. A progress thread polls the rings: it spins while data flows, then backs off
 * to parking (woken at once by local posts), so an idle group costs little CPU. The peers'
 * processes are watched by pid: a dead peer fails the transport within {@link #LIVENESS_NANOS}.
 */
public final class ShmTransport extends LinkTransport {

    /** Bytes of each ring; a larger message streams through it. */
    public static final int RING_BYTES = 4 << 20;

    private static final SetupRendezvous RENDEZVOUS = SetupRendezvous.SHM;

    // How often the progress thread checks the peers' processes while it serves the rings: a
    // dead peer's ring just stops, so this bounds how soon a transfer from it fails. A check
    // costs a few microseconds per peer.
    private static final long LIVENESS_NANOS = 20_000_000L;
    // How long the progress thread sleeps when nothing is awaited (local posts unpark it at once).
    private static final long IDLE_PARK_NANOS = 100_000_000L;

    private static final int RING_FILE_BYTES = ShmRing.CONTROL_BYTES + RING_BYTES;

    private final ShmChannel[] channels;
    private final ShmBoard board;
    private final List<MappedByteBuffer> mappings; // every segment this rank mapped

    private ShmTransport(
            int rank,
            int size,
            ShmChannel[] channels,
            ShmBoard board,
            List<MappedByteBuffer> mappings,
            AbortNotices notices) {
        super(rank, size, false, notices);
        this.channels = channels;
        this.board = board;
        this.mappings = mappings;
        for (int peer = 0; peer < size; peer++) {
            if (peer != rank) {
                links[peer] = new Link(peer, channels[peer], this);
            }
        }
        start("djl-dist-shm-r" + rank);
    }

    /**
     * Whether this machine offers shared memory for the transport.
     *
     * @return whether anonymous shared memory segments can be created ({@link ShmSegments})
     */
    public static boolean isAvailable() {
        return ShmSegments.isAvailable();
    }

    /**
     * Connects the ranks of one host, meeting through {@code store}: each rank creates the rings
     * its peers write to and its page of the board, as anonymous segments ({@link ShmSegments}),
     * and publishes where they are under {@code shm/<rank>}; it then maps the rings it writes to
     * and the peers' pages, and once every rank has mapped everything, closes the descriptors, so
     * that the memory lives exactly as long as the mappings: until every rank has closed its
     * transport, which lets go of its mappings ({@link ShmSegments#release}). Blocks until then.
     *
     * <p>A rank never creates what it expects a peer to have created: a peer's segment that is
     * missing or of the wrong size fails at once, naming the peer. A rank whose set-up fails tells
     * its peers through the store before it throws ({@link SetupRendezvous}): every rank still
     * waiting for it then fails at once, naming it and giving its reason, instead of waiting out
     * {@code timeout}.
     *
     * @param store the group's store, namespaced for the group
     * @param rank this rank
     * @param size the number of ranks, all on this host
     * @param timeout how long to wait for the peers
     * @return the transport
     * @throws CommunicationException if a peer does not join in time, gives up, or its segments are
     *     missing or wrong, or this rank's cannot be made, or the store fails
     */
    public static ShmTransport connect(Store store, int rank, int size, Duration timeout) {
        return connect(store, rank, size, timeout, AbortNotices.open(store, rank));
    }

    /**
     * Connects as {@link #connect(Store, int, int, Duration)} does, leaving and reading abort
     * reasons through the given notices (shared with another transport of the same ranks).
     *
     * @param store the group's store, namespaced for the group
     * @param rank this rank
     * @param size the number of ranks, all on this host
     * @param timeout how long to wait for the peers
     * @param notices this rank's abort notices in the group
     * @return the transport
     * @throws CommunicationException if a peer does not join in time, gives up, or its segments are
     *     missing or wrong, or this rank's cannot be made, or the store fails
     */
    public static ShmTransport connect(
            Store store, int rank, int size, Duration timeout, AbortNotices notices) {
        Deadline deadline = Deadline.after(timeout);
        String token = UUID.randomUUID().toString();
        List<ShmSegments.Segment> created = new ArrayList<>();
        List<MappedByteBuffer> mapped = new ArrayList<>();
        ShmChannel[] channels = new ShmChannel[size];
        boolean announced = false;
        try {
            // "token pid boardFd ringFd(0) ... ringFd(size - 1)": ring r carries rank r's messages
            // to this rank (-1 for this rank itself).
            StringBuilder where = new StringBuilder(token);
            where.append(' ').append(ProcessHandle.current().pid());
            ShmSegments.Segment page = ShmSegments.create(boardName(token), ShmBoard.PAGE_BYTES);
            created.add(page);
            mapped.add(page.buffer());
            where.append(' ').append(page.fd());
            MappedByteBuffer[] in = new MappedByteBuffer[size];
            for (int src = 0; src < size; src++) {
                if (src == rank) {
                    where.append(" -1");
                    continue;
                }
                ShmSegments.Segment ring =
                        ShmSegments.create(
                                name(token, src, rank), RING_BYTES + ShmRing.CONTROL_BYTES);
                created.add(ring);
                mapped.add(ring.buffer());
                in[src] = ring.buffer();
                where.append(' ').append(ring.fd());
            }
            MappedByteBuffer[] pages = new MappedByteBuffer[size];
            pages[rank] = page.buffer();
            long[] pids = new long[size];
            pids[rank] = ProcessHandle.current().pid();
            RENDEZVOUS.announce(store, rank, where.toString());
            announced = true;
            for (int dst = 0; dst < size; dst++) {
                if (dst == rank) {
                    continue;
                }
                Peer peer =
                        Peer.parse(dst, size, RENDEZVOUS.awaitAnnouncement(store, dst, deadline));
                pids[dst] = peer.pid;
                MappedByteBuffer out =
                        ShmSegments.open(
                                dst,
                                peer.pid,
                                peer.ringFds[rank],
                                name(peer.token, rank, dst),
                                RING_FILE_BYTES);
                mapped.add(out);
                pages[dst] =
                        ShmSegments.open(
                                dst,
                                peer.pid,
                                peer.boardFd,
                                boardName(peer.token),
                                ShmBoard.PAGE_BYTES);
                mapped.add(pages[dst]);
                channels[dst] =
                        new ShmChannel(
                                new ShmRing(in[dst], false), new ShmRing(out, true), peer.pid);
            }
            RENDEZVOUS.awaitAllDone(store, size, deadline);
            return new ShmTransport(
                    rank, size, channels, new ShmBoard(rank, pages, pids), mapped, notices);
        } catch (IOException | RuntimeException e) {
            // No thread of this transport ever started: nothing else touches the mappings.
            mapped.forEach(ShmSegments::release);
            // Told before the finally closes the descriptors: a peer that then finds this rank's
            // segments gone finds its reason too. Any failure, the store's included: a rank that
            // throws without a word leaves its peers waiting for it until their timeout.
            CommunicationException failure =
                    SetupRendezvous.failure(
                            rank,
                            e instanceof IOException
                                    ? "cannot create shared memory"
                                    : "failed setting up shared memory",
                            e);
            throw RENDEZVOUS.giveUp(store, rank, announced, failure);
        } finally {
            // Mapped by every rank, or given up: either way no peer may open them any more.
            created.forEach(ShmSegments.Segment::close);
        }
    }

    /** Where a peer's segments are, as it published them. */
    private record Peer(String token, long pid, int boardFd, int[] ringFds) {

        static Peer parse(int peer, int size, String published) {
            String[] f = published.split(" ");
            try {
                if (f.length == size + 3) {
                    int[] rings = new int[size];
                    for (int r = 0; r < size; r++) {
                        rings[r] = Integer.parseInt(f[3 + r]);
                    }
                    return new Peer(f[0], Long.parseLong(f[1]), Integer.parseInt(f[2]), rings);
                }
            } catch (NumberFormatException e) {
                // reported below, as any other malformed announcement
            }
            throw new CommunicationException(
                    "rank "
                            + peer
                            + " published '"
                            + published
                            + "' under shm/"
                            + peer
                            + " (expected: a token, a pid and "
                            + (size + 1)
                            + " descriptors, as numbers)",
                    peer);
        }
    }

    /**
     * {@inheritDoc}
     *
     * <p>Every rank's page of the board is mapped here.
     */
    @Override
    public ShmBoard board() {
        return board;
    }

    /** {@inheritDoc} */
    @Override
    public void beginCollective(long seq, OpSignature signature) {
        board.announce(seq, signature);
        super.beginCollective(seq, signature);
    }

    @Override
    void aborting(CommunicationException failure) {
        // On the board at once, before the caller can destroy the group: a peer waiting there
        // must fail with this rank's reason, not with its goodbye.
        board.markAborted(failure.getMessage());
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        board.markClosed();
        super.close();
    }

    @Override
    void loop() throws IOException {
        int idle = 0;
        long nextCheck = System.nanoTime() + LIVENESS_NANOS;
        while (!stopping) {
            runCommands();
            boolean busy = false;
            for (int peer = 0; peer < size; peer++) {
                Link link = links[peer];
                if (link != null && !link.isClosed()) {
                    busy |= serve(link, channels[peer]);
                }
            }
            long now = System.nanoTime();
            if (now - nextCheck > 0) {
                nextCheck = now + LIVENESS_NANOS;
                for (ShmChannel c : channels) {
                    if (c != null) {
                        c.checkPeer();
                    }
                }
            }
            if (busy || hasCommands()) {
                idle = 0;
                continue;
            }
            idle++;
            if (idle < 64) {
                Thread.onSpinWait();
                continue;
            }
            boolean expecting = expecting();
            if (idle < 2048 && expecting) {
                // A transfer is under way: the peer's bytes are due any moment. Yield rather
                // than park, so that a full or empty ring costs a context switch, not a timer;
                // but not for long, or a peer still computing would take this rank's core.
                Thread.yield();
            } else {
                // Waiting long: poll gently; waking every 50 us instead would cost ranks that
                // share cores a tenth of one. Nothing awaited: local posts and the waiters' pokes
                // unpark at once, so only a peer's early data waits, at most one long park. On
                // two cores a thread waking every millisecond for nothing slowed DDP steps
                // (docs/PERFORMANCE.md): the other rank's compute waits on whatever preempts
                // this one's.
                LockSupport.parkNanos(this, expecting ? 50_000L : IDLE_PARK_NANOS);
            }
        }
    }

    private boolean expecting() {
        for (Link link : links) {
            if (link != null && !link.isClosed() && link.isActive()) {
                return true;
            }
        }
        return false;
    }

    @Override
    void wakeup() {
        LockSupport.unpark(progressThread());
    }

    /**
     * Lets go of every mapping now (the descriptors were closed at set-up), so that the memory goes
     * once the peers have closed too, not at a garbage collection that may never come. {@link
     * #close()} calls it once the progress thread, the rings' only user, has stopped, and the
     * group's collectives, the board's users, have ended ({@code CpuBackend} closes its runner
     * before its transport). A thread that still touched them, past those bounded waits (a progress
     * thread that did not stop, an abort after the close marking the board), would find private
     * zeros there, not a crash ({@link ShmSegments#release}).
     */
    @Override
    void release() {
        mappings.forEach(ShmSegments::release);
    }

    private static boolean serve(Link link, ShmChannel c) {
        boolean readable = c.wantRead && (c.in.available() > 0 || c.peerGone());
        boolean writable = c.wantWrite && c.out.space() > 0;
        if (!readable && !writable) {
            return false;
        }
        try {
            link.serve(readable, writable);
        } catch (IOException | IllegalStateException e) {
            throw linkFailure(link, e);
        }
        return true;
    }

    private static String name(String token, int src, int dst) {
        return "djl-dist-" + token + "-" + src + "-" + dst;
    }

    private static String boardName(String token) {
        return "djl-dist-" + token + "-board";
    }

    /** The two rings to one peer as a {@link Link.Channel}, and the peer's liveness. */
    private static final class ShmChannel implements Link.Channel {

        final ShmRing in;
        final ShmRing out;
        private final long peerPid;
        private volatile boolean peerAlive = true;
        boolean wantRead = true;
        boolean wantWrite;
        private boolean closed;

        ShmChannel(ShmRing in, ShmRing out, long peerPid) {
            this.in = in;
            this.out = out;
            this.peerPid = peerPid;
        }

        void checkPeer() {
            peerAlive = PeerProcess.isRunning(peerPid);
        }

        boolean peerGone() {
            return in.isProducerClosed() || !peerAlive;
        }

        @Override
        public int read(ByteBuffer dst) {
            int n = in.read(dst);
            if (n == 0 && dst.hasRemaining() && peerGone() && in.available() == 0) {
                return -1;
            }
            return n;
        }

        @Override
        public void write(ByteBuffer[] srcs) throws IOException {
            if (!peerAlive) {
                throw new IOException("the peer's process (pid " + peerPid + ") is gone");
            }
            out.write(srcs);
        }

        @Override
        public void interest(boolean read, boolean write) {
            wantRead = read;
            wantWrite = write;
        }

        @Override
        public void close() {
            if (!closed) {
                closed = true;
                out.closeProducer();
            }
        }
    }
}
