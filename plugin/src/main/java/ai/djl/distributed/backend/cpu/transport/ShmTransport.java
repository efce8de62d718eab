package ai.djl.distributed.backend.cpu.transport;

import ai.djl.distributed.backend.CommunicationException;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreTimeoutException;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link Transport} between ranks of one host through shared memory: one {@link ShmRing} per
 * direction per pair, and one page per rank of a {@link ShmBoard} for small collectives, in files
 * under {@code /dev/shm} that are unlinked as soon as every rank has mapped them (nothing is left
 * behind, even after a crash). A progress thread polls the rings: it spins while data flows, then
 * backs off to parking (woken at once by local posts), so an idle group costs little CPU. The
 * peers' processes are watched by pid: a dead peer fails the transport within {@link
 * #LIVENESS_NANOS}.
 */
public final class ShmTransport extends LinkTransport {

    /** Bytes of each ring; a larger message streams through it. */
    public static final int RING_BYTES = 4 << 20;

    private static final long LIVENESS_NANOS = 100_000_000L;
    // How long the progress thread sleeps when nothing is awaited (local posts unpark it at once).
    private static final long IDLE_PARK_NANOS = 100_000_000L;
    private static final Path DIR = Path.of("/dev/shm");

    private static final int RING_FILE_BYTES = ShmRing.CONTROL_BYTES + RING_BYTES;

    private final ShmChannel[] channels;
    private final ShmBoard board;

    private ShmTransport(int rank, int size, ShmChannel[] channels, ShmBoard board) {
        super(rank, size, false);
        this.channels = channels;
        this.board = board;
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
     * @return whether {@code /dev/shm} is a writable directory
     */
    public static boolean isAvailable() {
        return Files.isDirectory(DIR) && Files.isWritable(DIR);
    }

    /**
     * Connects the ranks of one host, meeting through {@code store}: each rank creates the rings
     * its peers write to and publishes their names, maps the rings it writes to, and once every
     * rank has mapped everything, unlinks the files it created. Blocks until then.
     *
     * @param store the group's store, namespaced for the group
     * @param rank this rank
     * @param size the number of ranks, all on this host
     * @param timeout how long to wait for the peers
     * @return the transport
     * @throws CommunicationException if a peer does not join in time or the rings cannot be made
     */
    public static ShmTransport connect(Store store, int rank, int size, Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        String token = UUID.randomUUID().toString();
        List<Path> created = new ArrayList<>();
        ShmChannel[] channels = new ShmChannel[size];
        try {
            MappedByteBuffer[] in = new MappedByteBuffer[size];
            for (int src = 0; src < size; src++) {
                if (src != rank) {
                    Path p = DIR.resolve(name(token, src, rank));
                    created.add(p);
                    in[src] = map(p, true, RING_FILE_BYTES);
                }
            }
            MappedByteBuffer[] pages = new MappedByteBuffer[size];
            Path page = DIR.resolve(boardName(token));
            created.add(page);
            pages[rank] = map(page, true, ShmBoard.PAGE_BYTES);
            long pid = ProcessHandle.current().pid();
            store.set("shm/" + rank, (token + ":" + pid).getBytes(StandardCharsets.UTF_8));
            for (int dst = 0; dst < size; dst++) {
                if (dst == rank) {
                    continue;
                }
                String[] peer = waitFor(store, "shm/" + dst, dst, deadline).split(":");
                MappedByteBuffer out = map(DIR.resolve(name(peer[0], rank, dst)), false, 0);
                pages[dst] = map(DIR.resolve(boardName(peer[0])), false, 0);
                channels[dst] =
                        new ShmChannel(
                                new ShmRing(in[dst], false),
                                new ShmRing(out, true),
                                Long.parseLong(peer[1]));
            }
            awaitAllMapped(store, size, deadline);
            return new ShmTransport(rank, size, channels, new ShmBoard(rank, pages));
        } catch (IOException e) {
            throw new CommunicationException(
                    "rank " + rank + " cannot set up shared memory in " + DIR + ": " + e, -1, e);
        } finally {
            for (Path p : created) {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException ignored) {
                    // The mapping outlives the name; a leftover name is only clutter.
                }
            }
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

    /** {@inheritDoc} */
    @Override
    public void abort(CommunicationException cause) {
        // On the board at once, before the caller can destroy the group: a peer waiting there
        // must fail with this rank's reason, not with its goodbye.
        board.markAborted(cause.getMessage());
        super.abort(cause);
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

    @Override
    void release() {
        // The mappings are released with their buffers; the files were unlinked at setup.
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

    /** Maps a file: {@code bytes} long when creating it, else as long as it is. */
    private static MappedByteBuffer map(Path path, boolean create, int bytes) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(path.toFile(), "rw")) {
            if (create) {
                f.setLength(bytes);
            }
            return f.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, f.length());
        }
    }

    private static String waitFor(Store store, String key, int peer, Deadline deadline) {
        try {
            store.waitFor(
                    List.of(key), Duration.ofNanos(Math.max(1_000_000, deadline.remainingNanos())));
            return new String(store.get(key), StandardCharsets.UTF_8);
        } catch (StoreTimeoutException e) {
            throw new CommunicationException(
                    "rank " + peer + " did not set up shared memory within " + deadline.timeout(),
                    peer,
                    e);
        }
    }

    private static void awaitAllMapped(Store store, int size, Deadline deadline) {
        store.add("shm/mapped", 1);
        while (store.add("shm/mapped", 0) < size) {
            if (deadline.remainingNanos() <= 0) {
                throw new CommunicationException(
                        "not every rank mapped its shared memory within " + deadline.timeout(), -1);
            }
            LockSupport.parkNanos(1_000_000L);
        }
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
            peerAlive = ProcessHandle.of(peerPid).map(ProcessHandle::isAlive).orElse(false);
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
