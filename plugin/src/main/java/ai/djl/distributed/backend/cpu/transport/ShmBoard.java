package ai.djl.distributed.backend.cpu.transport;

import ai.djl.distributed.backend.CommunicationException;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.locks.LockSupport;

/**
 * A shared-memory notice board for small collectives between the ranks of one host: each rank posts
 * its whole message on its own page, then reads every peer's page, with no thread between the
 * ranks. A message through a socket or a ring passes through a progress thread on each side, and
 * waking a sleeping thread costs tens of microseconds; ranks that reach the collective together see
 * each other's posts within a microsecond here.
 *
 * <p>Each rank's page holds a counter of its posts and two slots, used alternately: a rank posts
 * its (n+2)-th message into the slot of its n-th only after completing its (n+1)-th exchange, which
 * needs every peer's (n+1)-th post, which each peer makes only after reading every n-th message. So
 * a slot is never overwritten while someone may still read it, without any acknowledgement. Every
 * post carries the collective's sequence number and signature; a reader compares them with its own,
 * so ranks that disagree fail naming both sides.
 *
 * <p>A reader spins briefly, then yields, then parks in short steps: ranks that arrive together pay
 * no wake-up, and a rank that waits long for a late peer leaves the core to it. While waiting it
 * watches the transport's health (a dead peer or an abort fails it at once) and the deadline. Used
 * by one collective thread at a time.
 */
public final class ShmBoard {

    /** The largest message a slot holds. */
    public static final int SLOT_BYTES = HybridTransport.SMALL_BYTES;

    /** Bytes of each rank's page: the header, then the two slots. */
    static final int PAGE_BYTES = 4096 + 2 * SLOT_BYTES;

    private static final int POSTED = 0;
    // + 64 * slot: seq, opcode, dtype, reduceOp, root, count, then the message's length
    private static final int SIG = 64;
    // The collective this rank runs now, board or not, under a version (odd while it changes).
    private static final int CURRENT_VERSION = 256;
    private static final int CURRENT = 264;
    private static final int CLOSED = 320;
    // Set once this rank aborts: 1 + the length of its reason, kept at ABORT_REASON (UTF-8).
    private static final int ABORTED = 384;
    // 1 while this rank writes into its peers' memory (PeerMemory), else 0.
    private static final int WRITING = 448;
    private static final int ABORT_REASON = 1024;
    private static final int MAX_REASON_BYTES = 3072;
    private static final int SLOTS = 4096;
    private static final long SPIN_NANOS = 50_000L;
    private static final long YIELD_NANOS = 500_000L;
    private static final long POKE_NANOS = 10_000_000L;
    private static final VarHandle LONG =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final int rank;
    private final ByteBuffer[] pages;
    private long posts;

    /**
     * Creates the board over every rank's mapped page.
     *
     * @param rank this rank
     * @param pages every rank's page, this rank's included, each {@link #PAGE_BYTES} long and
     *     zeroed before any rank posts
     */
    ShmBoard(int rank, MappedByteBuffer[] pages) {
        this.rank = rank;
        this.pages = new ByteBuffer[pages.length];
        for (int r = 0; r < pages.length; r++) {
            this.pages[r] = pages[r].duplicate().order(ByteOrder.LITTLE_ENDIAN);
        }
        this.posts = (long) LONG.getAcquire(this.pages[rank], POSTED);
    }

    /**
     * Posts {@code data}'s remaining bytes and returns every rank's message once all are posted.
     * Every rank of the group must call it for the same collective; their messages may differ in
     * length (a broadcast's root posts the data, the others nothing).
     *
     * @param seq the collective's sequence number
     * @param signature the collective, as this rank called it
     * @param data at most {@link #SLOT_BYTES} bytes; its position and limit are not changed
     * @param deadline when to give up on a peer
     * @param transport the group's transport, whose failure ends the wait
     * @return every rank's message in rank order, this rank's included: read-only views, valid
     *     until this rank's next exchange
     * @throws CommunicationException on a peer's failure, a mismatch or the deadline
     */
    public ByteBuffer[] exchange(
            long seq,
            OpSignature signature,
            ByteBuffer data,
            Deadline deadline,
            Transport transport) {
        int bytes = data.remaining();
        if (bytes > SLOT_BYTES) {
            throw new IllegalArgumentException(
                    "data: " + bytes + " bytes (expected: at most " + SLOT_BYTES + ")");
        }
        long post = ++posts;
        int slot = (int) (post & 1);
        ByteBuffer mine = pages[rank];
        mine.put(SLOTS + slot * SLOT_BYTES, data, data.position(), bytes);
        int sig = SIG + 64 * slot;
        putSignature(mine, sig, seq, signature);
        mine.putInt(sig + 32, bytes);
        LONG.setRelease(mine, POSTED, post);

        ByteBuffer[] all = new ByteBuffer[pages.length];
        for (int k = 0; k < pages.length; k++) {
            int peer = (rank + k) % pages.length;
            ByteBuffer page = pages[peer];
            if (peer != rank) {
                awaitPost(peer, post, seq, signature, deadline, transport);
                long theirSeq = page.getLong(sig);
                OpSignature theirs = getSignature(page, sig);
                if (theirSeq != seq) {
                    throw Mismatch.differentOrder(peer, seq, signature, theirSeq, theirs);
                }
                if (!theirs.equals(signature)) {
                    throw Mismatch.differentCall(peer, seq, signature, theirs);
                }
            }
            all[peer] =
                    page.slice(SLOTS + slot * SLOT_BYTES, page.getInt(sig + 32))
                            .asReadOnlyBuffer()
                            .order(ByteOrder.LITTLE_ENDIAN);
        }
        return all;
    }

    /**
     * Publishes the collective this rank now runs, whether it uses the board or not, so that a peer
     * waiting here for a post this rank will never make sees the disagreement at once.
     *
     * @param seq the collective's sequence number
     * @param signature what this rank called
     */
    public void announce(long seq, OpSignature signature) {
        ByteBuffer mine = pages[rank];
        long version = (long) LONG.getOpaque(mine, CURRENT_VERSION);
        LONG.setOpaque(mine, CURRENT_VERSION, version + 1);
        VarHandle.storeStoreFence();
        putSignature(mine, CURRENT, seq, signature);
        LONG.setRelease(mine, CURRENT_VERSION, version + 2);
    }

    /**
     * Tells the peers that this rank has aborted, and why: a peer waiting here for a post then
     * fails with this rank's reason at once, as one waiting on a link does when the abort frame
     * reaches it. Only the first reason is kept.
     *
     * @param reason why
     */
    public synchronized void markAborted(String reason) {
        ByteBuffer mine = pages[rank];
        if ((long) LONG.getAcquire(mine, ABORTED) != 0) {
            return;
        }
        byte[] bytes = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(bytes.length, MAX_REASON_BYTES);
        mine.put(ABORT_REASON, bytes, 0, n);
        LONG.setRelease(mine, ABORTED, 1L + n);
    }

    /** Tells the peers that this rank has closed its group: nothing more will be posted. */
    public void markClosed() {
        LONG.setRelease(pages[rank], CLOSED, 1L);
    }

    /**
     * Marks that this rank is about to write into its peers' buffers, then checks that none of them
     * has aborted or closed its group; call {@link #endPeerWrites()} once the writes are done. With
     * {@link #isWritingIntoPeers(int)} this makes a handshake: a peer that aborts, then sees this
     * rank not writing, knows that this rank will see its abort here and not write; so an aborting
     * rank can hand its buffer back to its caller without a peer writing into it after.
     *
     * @throws CommunicationException naming a peer that has aborted or closed (the mark is then
     *     cleared)
     */
    public void beginPeerWrites() {
        ByteBuffer mine = pages[rank];
        LONG.setVolatile(mine, WRITING, 1L);
        // The mark must be visible before the peers' marks are read (a store-load barrier).
        VarHandle.fullFence();
        for (int peer = 0; peer < pages.length; peer++) {
            if (peer == rank) {
                continue;
            }
            ByteBuffer page = pages[peer];
            long aborted = (long) LONG.getVolatile(page, ABORTED);
            if (aborted != 0 || (long) LONG.getVolatile(page, CLOSED) != 0) {
                LONG.setRelease(mine, WRITING, 0L);
                throw new CommunicationException(
                        "rank "
                                + peer
                                + (aborted != 0
                                        ? " aborted its process group: " + reason(page, aborted)
                                        : " has destroyed its process group")
                                + " (rank "
                                + rank
                                + " was about to write into its buffer)",
                        peer);
            }
        }
    }

    /** Clears the mark of {@link #beginPeerWrites()}: this rank's writes into peers are done. */
    public void endPeerWrites() {
        LONG.setRelease(pages[rank], WRITING, 0L);
    }

    /**
     * Returns whether {@code peer} is between {@link #beginPeerWrites()} and {@link
     * #endPeerWrites()}. Call it after this rank has aborted: once it returns false, the peer
     * writes nothing more into this rank's buffers.
     *
     * @param peer the peer
     * @return whether it may be writing into this rank's memory
     */
    public boolean isWritingIntoPeers(int peer) {
        // This rank's abort mark must be visible before the peer's mark is read.
        VarHandle.fullFence();
        return (long) LONG.getVolatile(pages[peer], WRITING) != 0;
    }

    /** Fails if {@code peer} will never make post {@code post}: it closed, moved on, or differs. */
    private void checkPeer(int peer, long post, long seq, OpSignature signature) {
        ByteBuffer page = pages[peer];
        long aborted = (long) LONG.getAcquire(page, ABORTED);
        if (aborted != 0 || (long) LONG.getAcquire(page, CLOSED) != 0) {
            if ((long) LONG.getAcquire(page, POSTED) >= post) {
                return; // it posted, then stopped: its post came first
            }
            if (aborted != 0) {
                throw new CommunicationException(
                        "rank " + peer + " aborted its process group: " + reason(page, aborted),
                        peer);
            }
            throw new CommunicationException(
                    "rank "
                            + peer
                            + " has destroyed its process group while rank "
                            + rank
                            + " waits for it in "
                            + signature
                            + " #"
                            + seq,
                    peer);
        }
        long version = (long) LONG.getAcquire(page, CURRENT_VERSION);
        if (version == 0 || (version & 1) != 0) {
            return; // nothing announced yet, or changing: look again later
        }
        long theirSeq = page.getLong(CURRENT);
        OpSignature theirs = getSignature(page, CURRENT);
        VarHandle.acquireFence();
        if ((long) LONG.getOpaque(page, CURRENT_VERSION) != version) {
            return;
        }
        if (theirSeq == seq && !theirs.equals(signature)) {
            throw Mismatch.differentCall(peer, seq, signature, theirs);
        }
        // A peer that moved on has posted, if it ever will: its post came before its announce.
        if (theirSeq > seq && (long) LONG.getAcquire(page, POSTED) < post) {
            throw Mismatch.skipped(peer, seq, signature, theirSeq, theirs);
        }
    }

    /** The reason a peer's page gives for its abort, whose mark is {@code aborted}. */
    private static String reason(ByteBuffer page, long aborted) {
        byte[] reason = new byte[(int) Math.min(aborted - 1, MAX_REASON_BYTES)];
        page.get(ABORT_REASON, reason);
        return new String(reason, StandardCharsets.UTF_8);
    }

    private static void putSignature(ByteBuffer page, int at, long seq, OpSignature signature) {
        page.putLong(at, seq)
                .putInt(at + 8, signature.opcode())
                .putInt(at + 12, signature.dtype())
                .putInt(at + 16, signature.reduceOp())
                .putInt(at + 20, signature.root())
                .putLong(at + 24, signature.count());
    }

    private static OpSignature getSignature(ByteBuffer page, int at) {
        return new OpSignature(
                page.getInt(at + 8),
                page.getInt(at + 12),
                page.getInt(at + 16),
                page.getInt(at + 20),
                page.getLong(at + 24));
    }

    private void awaitPost(
            int peer,
            long post,
            long seq,
            OpSignature signature,
            Deadline deadline,
            Transport transport) {
        ByteBuffer page = pages[peer];
        if ((long) LONG.getAcquire(page, POSTED) >= post) {
            return;
        }
        long start = System.nanoTime();
        boolean poked = false;
        while ((long) LONG.getAcquire(page, POSTED) < post) {
            long waited = System.nanoTime() - start;
            if (waited < SPIN_NANOS) {
                Thread.onSpinWait();
                continue;
            }
            if (Thread.interrupted()) {
                Thread.currentThread().interrupt();
                throw new CommunicationException(
                        "interrupted while waiting for rank " + peer + " in " + signature, peer);
            }
            checkPeer(peer, post, seq, signature);
            if (!poked && waited > POKE_NANOS) {
                // A peer that called another collective may have sent its data already: have the
                // transport compare it with ours now rather than at our next send. Not sooner:
                // it wakes the transport's thread, which would compete with the late peer.
                transport.poke();
                poked = true;
            }
            CommunicationException failure = transport.getFailure();
            if (failure != null) {
                throw new CommunicationException(
                        failure.getMessage()
                                + " (this rank was waiting for rank "
                                + peer
                                + " in "
                                + signature
                                + " #"
                                + seq
                                + ")",
                        failure.getPeerRank(),
                        failure);
            }
            if (deadline.remainingNanos() <= 0) {
                throw new CommunicationException(
                        signature
                                + " #"
                                + seq
                                + " timed out after "
                                + deadline.timeout()
                                + " waiting for rank "
                                + peer
                                + " to post its data (did rank "
                                + peer
                                + " die, stall, or skip this collective?)",
                        peer);
            }
            if (waited < YIELD_NANOS) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(this, waited < POKE_NANOS ? 50_000L : 1_000_000L);
            }
        }
    }
}
