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
import ai.djl.distributed.backend.Waits;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What every {@link Link}-based transport shares: one progress thread serves the links; aborts
 * reach it as commands. Posts either reach it as commands too, or, in a <em>direct</em> transport,
 * are made on the posting thread: a small send then costs one write and no thread hand-off, and a
 * receive whose message is already here completes at once. Subclasses supply the progress loop (a
 * selector, a poll of shared-memory rings) and how to wake it.
 */
abstract class LinkTransport implements Transport, Link.Owner {

    private static final Logger logger = LoggerFactory.getLogger(LinkTransport.class);

    /** Begins queued without a wake-up before the progress thread is woken to apply them. */
    private static final int MAX_PENDING_BEGINS = 64;

    /** How long {@link #close()} lets queued frames and goodbyes drain. */
    static final Duration CLOSE_DRAIN = Duration.ofSeconds(5);

    /** How long a later abort, or a close, waits for the first abort to tell the peers. */
    private static final Duration TELL_WAIT = AbortNotices.PUBLISH_WAIT.plus(Duration.ofSeconds(1));

    private static final OpSignature CONTROL = new OpSignature(0, 0, 0, 0, 0);

    final int rank;
    final int size;
    final Link[] links;
    private final boolean direct;
    private final AbortNotices notices;
    private final ConcurrentLinkedQueue<Runnable> commands = new ConcurrentLinkedQueue<>();
    private volatile CommunicationException failure;
    volatile boolean stopping;
    private final AtomicBoolean closed = new AtomicBoolean();
    private final AtomicInteger pendingBegins = new AtomicInteger();
    private final Object aborting = new Object(); // held while a direct abort tells the peers
    private boolean linksAborted; // guarded by aborting
    // Completed once the progress thread no longer serves the links: it aborted them, or its loop
    // ended. Until then it may still copy into a posted receive's buffer.
    private final CompletableFuture<Void> linksDown = new CompletableFuture<>();
    // Completed once the first abort has told the peers (in direct mode) or queued the telling.
    private final CompletableFuture<Void> told = new CompletableFuture<>();
    private volatile Thread teller; // the thread telling the peers, while it does
    private Thread progressThread;
    // The other half of a HybridTransport, whose receives may wait for this one's messages.
    private volatile LinkTransport sibling;

    /**
     * Creates the transport; the subclass adds the links, then calls {@link #start(String)}.
     *
     * @param rank this rank
     * @param size the number of ranks
     * @param direct whether posts run on the posting thread (the channels must then take interest
     *     changes from any thread and wake the loop for them)
     * @param notices where this rank leaves the reason of its abort, and reads a lost peer's
     */
    LinkTransport(int rank, int size, boolean direct, AbortNotices notices) {
        this.rank = rank;
        this.size = size;
        this.links = new Link[size];
        this.direct = direct;
        this.notices = notices;
    }

    /**
     * Called once, by the first abort, before the peers are told; a subclass tells the peers of its
     * own channels here (the shared-memory board).
     *
     * @param failure the abort's cause, explained where it was a lost peer
     */
    void aborting(CommunicationException failure) {}

    /**
     * Pairs the two transports of a {@link HybridTransport}, which carry the same ranks' messages.
     * In an all-to-all, whose per-pair sizes no signature carries, the two ranks of a pair that
     * disagree on a size may pick different transports: each then looks for the message that came
     * over the other, and reports the mismatch instead of waiting out the deadline. And the two
     * fail together: the first abort of either aborts the other with the same cause, so that a
     * collective waiting on one half's transfers fails as soon as the other half fails.
     *
     * @param a one transport
     * @param b the other
     */
    static void pair(LinkTransport a, LinkTransport b) {
        a.sibling = b;
        b.sibling = a;
    }

    /** Starts the progress thread; call once the links are in place. */
    final void start(String name) {
        progressThread = new Thread(this::progress, name);
        progressThread.setDaemon(true);
        progressThread.start();
    }

    /** Runs until {@link #stopping}: waits for events, runs commands, serves the links. */
    abstract void loop() throws Exception;

    /** Wakes the progress loop from another thread. */
    abstract void wakeup();

    /** Releases what the subclass owns (selector, mappings), after the loop has stopped. */
    abstract void release();

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
        Link link = link(peer);
        Transfer t = new Transfer(peer, true, signature, data.remaining());
        ByteBuffer[] frame = {
            Frame.encode(Frame.DATA, slot, signature, data.remaining()), data.duplicate()
        };
        return post(t, link, () -> link.send(new Link.OutFrame(frame, t)));
    }

    /** {@inheritDoc} */
    @Override
    public Transfer recv(int peer, long slot, OpSignature signature, ByteBuffer into) {
        Link link = link(peer);
        Transfer t = new Transfer(peer, false, signature, into.remaining());
        return post(
                t,
                link,
                () -> {
                    link.receive(new Link.PostedRecv(slot, signature, into, t, null));
                    if (signature.opcode() == OpSignature.ALL_TO_ALL) {
                        checkNotSentElsewhere(peer, slot, signature, into.remaining());
                    }
                });
    }

    /** {@inheritDoc} */
    @Override
    public Transfer recvReduce(
            int peer, long slot, OpSignature signature, ByteBuffer acc, Reducer reducer) {
        Link link = link(peer);
        Transfer t = new Transfer(peer, false, signature, acc.remaining());
        return post(
                t, link, () -> link.receive(new Link.PostedRecv(slot, signature, acc, t, reducer)));
    }

    /** {@inheritDoc} */
    @Override
    public void beginCollective(long seq, OpSignature signature) {
        if (direct) {
            // Posts come from this thread too: the begin must be in place before them.
            for (Link link : links) {
                if (link != null) {
                    link.begin(seq, signature);
                }
            }
            return;
        }
        // Queued without waking the progress thread: it applies the begin before it next serves a
        // frame or a post, which is when a mismatch can first show. Waking it for every collective
        // would cost two context switches each, which small collectives feel.
        commands.add(
                () -> {
                    for (Link link : links) {
                        if (link != null) {
                            link.begin(seq, signature);
                        }
                    }
                });
        // Collectives that never touch this transport (the board's) must not pile begins up.
        if (pendingBegins.incrementAndGet() >= MAX_PENDING_BEGINS) {
            wakeup();
        }
    }

    /** {@inheritDoc} */
    @Override
    public void poke() {
        if (!commands.isEmpty()) {
            wakeup();
        }
    }

    /** {@inheritDoc} */
    @Override
    public CommunicationException getFailure() {
        return failure;
    }

    /** {@inheritDoc} */
    @Override
    public void abort(CommunicationException failed) {
        // A peer lost without a word may have left its reason in the store: the first cause must
        // travel, not "lost the connection" from a rank that is alive and timed out.
        CommunicationException cause =
                failure == null && LinkLostException.isLoss(failed)
                        ? notices.explain(failed)
                        : failed;
        abortWith(cause);
    }

    /**
     * Aborts with a cause already explained; the first abort of either half of a {@link
     * HybridTransport} aborts the other half with the same cause.
     */
    private void abortWith(CommunicationException cause) {
        boolean first;
        synchronized (this) {
            first = failure == null;
            if (first) {
                failure = cause;
            }
        }
        Thread current = Thread.currentThread();
        LinkTransport other = sibling;
        // A progress thread never waits here for its own loop, nor for its sibling's: the sibling
        // may be calling in from its own progress thread (a mismatch one half finds, an abort
        // passed to the other half), each waiting for what the other would complete.
        boolean onLoop =
                current == progressThread || (other != null && current == other.progressThread);
        if (first) {
            logger.debug("rank {}: transport aborted", rank, cause);
            teller = current;
            try {
                tellPeers(cause);
            } finally {
                teller = null;
                told.complete(null);
            }
            if (other != null && !closed.get() && !other.closed.get()) {
                // The group is doomed, and the other half's transfers may be what a collective
                // waits on (a small receive over TCP while the mismatch came over shared memory):
                // they must fail now, with this cause, not at the deadline naming a live peer.
                // Called once this half has told its peers, so that the other's abort, which comes
                // back here, finds nothing to wait for; and only by the first abort of each half,
                // so that it comes back only once. Not once either half is closing: a peer that
                // closes its end after this rank's goodbye looks like a loss to this half, which
                // must not mark the other, still saying goodbye, aborted.
                other.abortWith(cause);
            }
        } else if (!onLoop && current != teller) {
            // (The teller itself comes back here when a link it aborts reports its peer gone.)
            // Before any aborting caller learns of the failure and perhaps destroys the group or
            // frees its buffers, the first must have told the peers (store, board, links).
            Waits.awaitUninterruptibly(told, System.nanoTime() + TELL_WAIT.toNanos());
        }
        if (direct) {
            synchronized (aborting) {
                if (!linksAborted) { // the first aborter gave up waiting on the store
                    linksAborted = true;
                    abortLinks(failure);
                }
            }
        } else if (!onLoop
                && !Waits.awaitUninterruptibly(
                        linksDown, System.nanoTime() + CLOSE_DRAIN.toNanos())) {
            // Whoever aborts may free the buffers of the transfers this fails as soon as it
            // returns (a failed collective hands its arrays back to the caller): it returns once
            // the progress thread has stopped copying into them, or warns.
            logger.warn(
                    "rank {}: the transport's progress thread did not stop serving its links"
                            + " within {} of the abort",
                    rank,
                    CLOSE_DRAIN);
        }
    }

    /**
     * The first abort tells the peers why: on the subclass's own channel (the board), then in the
     * store, then on the links, in that order, since a peer that sees a link close reads the store,
     * and one waiting on the board reads the board.
     */
    private void tellPeers(CommunicationException cause) {
        aborting(cause);
        notices.publish(cause);
        if (direct) {
            synchronized (aborting) {
                if (!linksAborted) {
                    linksAborted = true;
                    abortLinks(cause);
                }
            }
        } else {
            command(
                    () -> {
                        try {
                            abortLinks(cause);
                        } finally {
                            linksDown.complete(null);
                        }
                    });
        }
    }

    /** {@inheritDoc} */
    @Override
    public CommunicationException onPeerGone(CommunicationException cause, boolean orderly) {
        // A goodbye only closes that link; a link lost without one means a dead or aborted peer,
        // which dooms every collective of this group.
        if (orderly) {
            return cause;
        }
        abort(cause);
        CommunicationException f = failure;
        return f != null && LinkLostException.isLoss(cause) ? f : cause;
    }

    /** {@inheritDoc} */
    @Override
    public void onUnmatched(int peer, Frame frame) {
        LinkTransport other = sibling;
        if (other == null || failure != null) {
            return;
        }
        Link.PostedRecv r = other.links[peer].posted(frame.slot);
        if (r != null) {
            // Its receive waits on the other transport: fail it there, where it is awaited.
            other.abort(
                    Mismatch.differentMessage(
                            peer,
                            frame.slot,
                            r.signature(),
                            r.into().remaining(),
                            frame.signature,
                            frame.length));
        }
    }

    /**
     * The mirror image of {@link #onUnmatched}, run once a receive is posted here (on the progress
     * thread where posts go through it): its message may have come over the sibling already.
     * Between the two, one sees the other, since each records its own side under its link's lock
     * before it looks at the other's.
     */
    private void checkNotSentElsewhere(int peer, long slot, OpSignature signature, long bytes) {
        LinkTransport other = sibling;
        Frame f = other == null ? null : other.links[peer].arrived(slot);
        if (f != null) {
            throw Mismatch.differentMessage(peer, slot, signature, bytes, f.signature, f.length);
        }
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        if (failure != null) {
            // An abort under way on another thread tells the peers first (its link aborts, or
            // its command, which the loop runs before it ends), so they hear the reason.
            Waits.awaitUninterruptibly(told, System.nanoTime() + TELL_WAIT.toNanos());
        }
        if (failure == null && progressThread.isAlive()) {
            // Goodbyes queue behind frames not yet written, so waiting for them drains the
            // links: an isend issued just before close still reaches its peer.
            List<Transfer> byes = new ArrayList<>();
            for (Link link : links) {
                if (link != null) {
                    Transfer t = new Transfer(link.peer, true, CONTROL, 0);
                    ByteBuffer[] frame = {Frame.encode(Frame.BYE, 0, CONTROL, 0)};
                    byes.add(post(t, link, () -> link.send(new Link.OutFrame(frame, t))));
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
        wakeup();
        try {
            progressThread.join(CLOSE_DRAIN.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (aborting) {
            // An abort under way on another thread finishes telling the peers first.
        }
        CommunicationException closedCause =
                new CommunicationException("the transport of rank " + rank + " is closed", -1);
        for (Link link : links) {
            if (link != null) {
                link.close(closedCause);
            }
        }
        release();
    }

    /** Returns the progress thread, once started. */
    final Thread progressThread() {
        return progressThread;
    }

    /** Runs the commands posted so far; on the progress thread. */
    final void runCommands() {
        pendingBegins.set(0);
        for (Runnable c; (c = commands.poll()) != null; ) {
            c.run();
        }
    }

    final boolean hasCommands() {
        return !commands.isEmpty();
    }

    /** Wraps a link failure as the transport's, naming the peer. */
    static CommunicationException linkFailure(Link link, Exception e) {
        if (e instanceof IllegalStateException) {
            return new CommunicationException(e.getMessage(), link.peer, e);
        }
        return new LinkLostException(
                "the link to rank " + link.peer + " failed: " + e.getMessage(), link.peer, e);
    }

    private Link link(int peer) {
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

    /** Posts to a link, directly or through the progress thread, unless the transport is done. */
    private Transfer post(Transfer t, Link link, Runnable action) {
        CommunicationException f = failure;
        if (f != null) {
            t.fail(f);
            return t;
        }
        if (stopping) {
            t.fail(new CommunicationException("the transport of rank " + rank + " is closed", -1));
            return t;
        }
        if (!direct) {
            command(guarded(t, action));
            return t;
        }
        try {
            action.run();
        } catch (CommunicationException e) {
            abort(e);
            CommunicationException first = failure;
            t.fail(first != null && LinkLostException.isLoss(e) ? first : e);
        } catch (IllegalStateException e) { // a malformed frame, read on this thread
            CommunicationException ce = linkFailure(link, e);
            t.fail(ce);
            abort(ce);
        }
        return t;
    }

    private void command(Runnable command) {
        commands.add(command);
        if (Thread.currentThread() != progressThread) {
            wakeup();
        }
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

    private void progress() {
        try {
            loop();
            runCommands();
        } catch (CommunicationException e) {
            abort(e);
            drainAfterAbort();
        } catch (Exception | Error e) {
            abort(new CommunicationException("rank " + rank + "'s transport failed: " + e, -1, e));
            drainAfterAbort();
        } finally {
            linksDown.complete(null);
        }
    }

    /** After the loop ends in failure, keeps failing late posts. */
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
        for (Link link : links) {
            if (link != null) {
                // The peer then fails naming our reason rather than a bare lost link.
                link.abort(
                        cause,
                        new ByteBuffer[] {
                            Frame.encode(Frame.ABORT, 0, CONTROL, n), ByteBuffer.wrap(reason, 0, n)
                        });
            }
        }
    }
}
