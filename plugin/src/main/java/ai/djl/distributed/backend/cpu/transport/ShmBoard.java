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

import static ai.djl.distributed.backend.cpu.transport.BoardPage.DECIDING;
import static ai.djl.distributed.backend.cpu.transport.BoardPage.DONE;
import static ai.djl.distributed.backend.cpu.transport.BoardPage.FAILED_AFTER;
import static ai.djl.distributed.backend.cpu.transport.BoardPage.FAILED_IN;
import static ai.djl.distributed.backend.cpu.transport.BoardPage.POSTED;
import static ai.djl.distributed.backend.cpu.transport.BoardPage.hasPosted;
import static ai.djl.distributed.backend.cpu.transport.BoardPage.phaseOf;
import static ai.djl.distributed.backend.cpu.transport.BoardPage.postOf;
import static ai.djl.distributed.backend.cpu.transport.BoardPage.state;

import ai.djl.distributed.CommunicationException;

import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.util.concurrent.locks.LockSupport;

/**
 * A shared-memory notice board for small collectives between the ranks of one host: each rank posts
 * its whole message on its own page ({@link BoardPage}), then reads every peer's page, with no
 * thread between the ranks. A message through a socket or a ring passes through a progress thread
 * on each side, and waking a sleeping thread costs tens of microseconds; ranks that reach the
 * collective together see each other's posts within a microsecond here.
 *
 * <p><b>Slots.</b> Each page has two slots, used alternately: a rank posts its (n+2)-th message
 * into the slot of its n-th only after completing its (n+1)-th exchange, which needs every peer's
 * (n+1)-th post, which each peer makes only after reading every n-th message. So a slot is never
 * overwritten while someone may still read it, without any acknowledgement. Every post carries the
 * collective's sequence number and signature; a reader compares them with its own, so ranks that
 * disagree fail naming both sides.
 *
 * <p><b>One verdict.</b> An exchange completes on every rank or fails on every rank. It completes
 * where every rank has posted before any rank gave up on it. A rank gives up (at its deadline, on
 * an interrupt, a dead peer or its group's abort) in two steps: it marks its page {@code DECIDING},
 * then, after a full fence, looks at every peer's post once more; if all are there after all, it
 * completes like everyone else, otherwise it marks the exchange {@code FAILED_IN}. A rank that has
 * every post does the mirror image before it completes: after a full fence it reads every peer's
 * state, waits out a {@code DECIDING} one, and fails if one failed. The two fences pair up as
 * Dekker's: the rank completing sees the other's {@code DECIDING}, or the rank deciding sees every
 * post the completing rank saw. So a late rank can no longer complete an exchange, with the posts
 * of a peer that has since given up on it, while that peer reports a failure.
 *
 * <p>A reader spins briefly, then yields, then parks in short steps: ranks that arrive together pay
 * no wake-up, and a rank that waits long for a late peer leaves the core to it. While waiting it
 * watches the peers' processes (a dead peer is seen within {@link #LIVENESS_NANOS}), their pages,
 * the transport's health and the deadline. Used by one collective thread at a time; {@link
 * #markAborted} may come from any thread.
 */
public final class ShmBoard {

    /** The largest message a slot holds. */
    public static final int SLOT_BYTES = BoardPage.SLOT_BYTES;

    /** Bytes of each rank's page. */
    static final int PAGE_BYTES = BoardPage.BYTES;

    /** How often a waiting rank checks that the peer it waits for still runs. */
    static final long LIVENESS_NANOS = 10_000_000L;

    private static final long SPIN_NANOS = 50_000L;
    private static final long YIELD_NANOS = 500_000L;
    private static final long POKE_NANOS = 10_000_000L;
    // How long a rank that has every post waits beyond its deadline for a live peer to decide.
    private static final long DECIDE_GRACE_NANOS = 2_000_000_000L;

    private final int rank;
    private final BoardPage[] pages;
    private final long[] pids;
    private final BoardPage mine;
    private long posts;

    /**
     * Creates the board over every rank's mapped page.
     *
     * @param rank this rank
     * @param pages every rank's page, this rank's included, each {@link #PAGE_BYTES} long and
     *     zeroed before any rank posts
     * @param pids every rank's process id, to notice a peer that died
     */
    ShmBoard(int rank, MappedByteBuffer[] pages, long[] pids) {
        this.rank = rank;
        this.pages = new BoardPage[pages.length];
        for (int r = 0; r < pages.length; r++) {
            this.pages[r] = new BoardPage(pages[r]);
        }
        this.pids = pids.clone();
        this.mine = this.pages[rank];
        this.posts = postOf(mine.state());
    }

    /**
     * Posts {@code data}'s remaining bytes and returns every rank's message once all are posted.
     * Every rank of the group must call it for the same collective; their messages may differ in
     * length (a broadcast's root posts the data, the others nothing). Every rank gets the same
     * verdict (see the class comment).
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
        long post = posts + 1;
        int slot = (int) (post & 1);
        // The slot is rewritten only once exchange post - 2, its last user, is surely done: this
        // rank completed post - 1, which every peer posted only after reading post - 2.
        if (mine.state() != state(post - 1, DONE)
                || !writeAndPost(slot, post, seq, signature, data)) {
            // Aborted by another thread since the last exchange: this one never starts.
            throw new CommunicationException(
                    signature
                            + " #"
                            + seq
                            + " cannot start: rank "
                            + rank
                            + " has aborted ("
                            + mine.reason()
                            + ")",
                    -1);
        }
        posts = post;
        ByteBuffer[] all = new ByteBuffer[pages.length];
        for (int k = 0; k < pages.length; k++) {
            int peer = (rank + k) % pages.length;
            if (peer != rank) {
                try {
                    awaitPost(peer, post, seq, signature, deadline, transport);
                } catch (CommunicationException stop) {
                    if (!decideToComplete(post, stop)) {
                        throw stop;
                    }
                }
                BoardPage page = pages[peer];
                long theirSeq = page.slotSeq(slot);
                OpSignature theirs = page.slotSignature(slot);
                if (theirSeq != seq) {
                    throw fail(
                            post, Mismatch.differentOrder(peer, seq, signature, theirSeq, theirs));
                }
                if (!theirs.equals(signature)) {
                    throw fail(post, Mismatch.differentCall(peer, seq, signature, theirs));
                }
            }
            all[peer] = pages[peer].slotData(slot);
        }
        confirm(post, seq, signature, deadline);
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
        mine.announce(seq, signature);
    }

    /**
     * Tells the peers that this rank has aborted, and why: a peer waiting here for a post then
     * fails with this rank's reason at once, as one waiting on a link does when the abort frame
     * reaches it. An exchange this rank has posted and not completed is decided as its collective
     * thread would decide it at its deadline: completed where every peer has posted, else failed,
     * on every rank alike. Only the first reason is kept. Any thread may call it.
     *
     * @param reason why
     */
    public synchronized void markAborted(String reason) {
        mine.markAborted(reason);
        for (int spins = 1; ; spins++) {
            long s = mine.state();
            long post = postOf(s);
            long phase = phaseOf(s);
            if (phase == FAILED_IN || phase == FAILED_AFTER) {
                return;
            }
            if (phase == DECIDING) {
                pause(spins); // the collective thread decides this one: wait for it
                continue;
            }
            if (phase == DONE) {
                if (mine.casState(s, state(post, FAILED_AFTER))) {
                    return;
                }
                continue;
            }
            if (mine.casState(s, state(post, DECIDING))) {
                boolean all = false;
                try {
                    VarHandle.fullFence();
                    all = allPosted(post);
                } finally {
                    // Never left DECIDING, even on an Error: the collective thread waits on it.
                    mine.casState(
                            state(post, DECIDING), state(post, all ? FAILED_AFTER : FAILED_IN));
                }
                return;
            }
        }
    }

    /** Tells the peers that this rank has closed its group: nothing more will be posted. */
    public void markClosed() {
        mine.markClosed();
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
        mine.setWriting(true);
        // The mark must be visible before the peers' marks are read (a store-load barrier).
        VarHandle.fullFence();
        for (int peer = 0; peer < pages.length; peer++) {
            BoardPage page = pages[peer];
            if (peer != rank && (page.isAborted() || page.isClosed())) {
                mine.setWriting(false);
                throw new CommunicationException(
                        "rank "
                                + peer
                                + (page.isAborted()
                                        ? " aborted its process group: " + page.reason()
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
        mine.setWriting(false);
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
        return pages[peer].isWriting();
    }

    private boolean writeAndPost(
            int slot, long post, long seq, OpSignature signature, ByteBuffer data) {
        mine.writeSlot(slot, seq, signature, data);
        return mine.casState(state(post - 1, DONE), state(post, POSTED));
    }

    /** One round of a wait for another thread of this rank or a peer to decide. */
    private static void pause(int spins) {
        if (spins % 1024 != 0) {
            Thread.onSpinWait();
        } else if (spins < 1 << 16) {
            Thread.yield();
        } else {
            LockSupport.parkNanos(50_000L); // a descheduled decider: leave it the core
        }
    }

    /**
     * Gives up on exchange {@code post} unless every peer has posted after all: the first half of
     * the handshake in the class comment.
     *
     * @return whether the exchange completes after all
     */
    private boolean decideToComplete(long post, CommunicationException stop) {
        long posted = state(post, POSTED);
        if (!mine.casState(posted, state(post, DECIDING))) {
            // Another thread aborted the group and decided for us.
            return awaitDecided(post) == FAILED_AFTER;
        }
        long outcome = state(post, FAILED_IN);
        try {
            VarHandle.fullFence();
            if (allPosted(post)) {
                outcome = posted;
                return true;
            }
            // The reason first: a peer that sees the failure reads it.
            mine.markAborted(stop.getMessage());
            return false;
        } finally {
            // Never left DECIDING, even on an Error: peers and this rank's threads wait on it.
            mine.casState(state(post, DECIDING), outcome);
        }
    }

    /**
     * Marks exchange {@code post} failed here, for a reason every rank sees alike (a mismatch), and
     * returns that reason to throw.
     */
    private CommunicationException fail(long post, CommunicationException cause) {
        mine.markAborted(cause.getMessage());
        if (!mine.casState(state(post, POSTED), state(post, FAILED_IN))) {
            awaitDecided(post); // another thread's abort decides it; this rank fails either way
        }
        return cause;
    }

    /** Waits until no thread of this rank is deciding exchange {@code post}; returns the phase. */
    private long awaitDecided(long post) {
        long s;
        for (int spins = 1; phaseOf(s = mine.state()) == DECIDING && postOf(s) == post; spins++) {
            pause(spins);
        }
        return phaseOf(s);
    }

    /**
     * The second half of the handshake: with every post seen, checks that no peer gave up on this
     * exchange first, then completes it.
     */
    private void confirm(long post, long seq, OpSignature signature, Deadline deadline) {
        VarHandle.fullFence();
        long giveUp = System.nanoTime() + deadline.remainingNanos() + DECIDE_GRACE_NANOS;
        for (int peer = 0; peer < pages.length; peer++) {
            if (peer == rank) {
                continue;
            }
            long s;
            for (int spins = 1;
                    phaseOf(s = pages[peer].state()) == DECIDING && postOf(s) == post;
                    spins++) {
                // A live peer decides within microseconds; one that died deciding told no one,
                // and it posted, so it counts as posted.
                if (spins % 1024 == 0) {
                    if (!isAlive(peer)) {
                        break;
                    }
                    if (System.nanoTime() - giveUp > 0 && outwait(post, peer, seq, signature)) {
                        break;
                    }
                }
                pause(spins);
            }
            if (postOf(s) == post && phaseOf(s) == FAILED_IN) {
                throw fail(post, gaveUp(peer, seq, signature));
            }
        }
        if (!mine.casState(state(post, POSTED), state(post, DONE))
                && awaitDecided(post) != FAILED_AFTER) {
            // Another thread aborted the group, and found a post missing when it decided.
            throw new CommunicationException(
                    signature + " #" + seq + " on rank " + rank + " was aborted: " + mine.reason(),
                    -1);
        }
        // Else completed; or aborted with every post in, which completes it everywhere.
    }

    /**
     * Gives up on a live peer that stays {@code DECIDING} past the deadline, through the same
     * handshake as any give-up (never alone, or the peer could complete what this rank fails):
     * marks this rank {@code DECIDING}, then looks at the peer again. Returns whether this rank may
     * stop waiting for the peer and complete; throws if it failed the exchange.
     */
    private boolean outwait(long post, int peer, long seq, OpSignature signature) {
        long posted = state(post, POSTED);
        if (!mine.casState(posted, state(post, DECIDING))) {
            if (awaitDecided(post) == FAILED_AFTER) {
                return true; // every post was in when this rank's abort decided: it completes
            }
            throw new CommunicationException(
                    signature + " #" + seq + " on rank " + rank + " was aborted: " + mine.reason(),
                    -1);
        }
        long outcome = posted;
        try {
            VarHandle.fullFence();
            long s = pages[peer].state();
            if (phaseOf(s) != DECIDING || postOf(s) != post) {
                return false; // it decided meanwhile: judge its new state
            }
            outcome = state(post, FAILED_IN);
            CommunicationException e =
                    new CommunicationException(
                            signature
                                    + " #"
                                    + seq
                                    + ": rank "
                                    + peer
                                    + " did not decide whether it gives up on it",
                            peer);
            mine.markAborted(e.getMessage());
            throw e;
        } finally {
            mine.casState(state(post, DECIDING), outcome);
        }
    }

    private CommunicationException gaveUp(int peer, long seq, OpSignature signature) {
        return new CommunicationException(
                "rank "
                        + peer
                        + " gave up on "
                        + signature
                        + " #"
                        + seq
                        + ": "
                        + pages[peer].reason(),
                peer);
    }

    private boolean allPosted(long post) {
        for (int peer = 0; peer < pages.length; peer++) {
            if (peer != rank && !hasPosted(pages[peer].state(), post)) {
                return false;
            }
        }
        return true;
    }

    private boolean isAlive(int peer) {
        return PeerProcess.isRunning(pids[peer]);
    }

    /** Fails if {@code peer} will never make post {@code post}: it left, moved on, or differs. */
    private void checkPeer(int peer, long post, long seq, OpSignature signature) {
        BoardPage page = pages[peer];
        long s = page.state();
        if (hasPosted(s, post)) {
            return;
        }
        if (postOf(s) == post) { // FAILED_IN: it posted, then gave up
            throw gaveUp(peer, seq, signature);
        }
        if (page.isAborted()) {
            throw new CommunicationException(
                    "rank " + peer + " aborted its process group: " + page.reason(), peer);
        }
        if (page.isClosed()) {
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
        BoardPage.Announced current = page.announced();
        if (current == null) {
            return; // nothing announced yet, or changing: look again later
        }
        if (current.seq() == seq && !current.signature().equals(signature)) {
            throw Mismatch.differentCall(peer, seq, signature, current.signature());
        }
        // A peer that moved on has posted, if it ever will: its post came before its announce.
        if (current.seq() > seq && !hasPosted(page.state(), post)) {
            throw Mismatch.skipped(peer, seq, signature, current.seq(), current.signature());
        }
    }

    private void awaitPost(
            int peer,
            long post,
            long seq,
            OpSignature signature,
            Deadline deadline,
            Transport transport) {
        BoardPage page = pages[peer];
        if (hasPosted(page.state(), post)) {
            return;
        }
        long start = System.nanoTime();
        long nextLiveness = start + LIVENESS_NANOS;
        boolean poked = false;
        while (!hasPosted(page.state(), post)) {
            long now = System.nanoTime();
            long waited = now - start;
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
            if (now - nextLiveness > 0) {
                nextLiveness = now + LIVENESS_NANOS;
                if (!isAlive(peer) && !hasPosted(page.state(), post)) {
                    throw new CommunicationException(
                            "rank "
                                    + peer
                                    + "'s process (pid "
                                    + pids[peer]
                                    + ") died while rank "
                                    + rank
                                    + " waited for it in "
                                    + signature
                                    + " #"
                                    + seq,
                            peer);
                }
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
