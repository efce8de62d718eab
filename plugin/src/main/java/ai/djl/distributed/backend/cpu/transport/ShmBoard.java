package ai.djl.distributed.backend.cpu.transport;

import ai.djl.distributed.backend.CommunicationException;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
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
    // + 64 * slot: seq, opcode, dtype, reduceOp, root, count, length
    private static final int SIG = 64;
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
        mine.putLong(sig, seq)
                .putInt(sig + 8, signature.opcode())
                .putInt(sig + 12, signature.dtype())
                .putInt(sig + 16, signature.reduceOp())
                .putInt(sig + 20, signature.root())
                .putLong(sig + 24, signature.count())
                .putInt(sig + 32, bytes);
        LONG.setRelease(mine, POSTED, post);

        ByteBuffer[] all = new ByteBuffer[pages.length];
        for (int k = 0; k < pages.length; k++) {
            int peer = (rank + k) % pages.length;
            ByteBuffer page = pages[peer];
            if (peer != rank) {
                awaitPost(peer, post, seq, signature, deadline, transport);
                long theirSeq = page.getLong(sig);
                OpSignature theirs =
                        new OpSignature(
                                page.getInt(sig + 8),
                                page.getInt(sig + 12),
                                page.getInt(sig + 16),
                                page.getInt(sig + 20),
                                page.getLong(sig + 24));
                if (theirSeq != seq) {
                    throw Mismatch.skipped(peer, seq, signature, theirSeq, theirs);
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
