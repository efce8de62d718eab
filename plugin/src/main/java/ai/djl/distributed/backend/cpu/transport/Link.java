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

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The connection to one peer over any byte stream (a TCP socket, a shared-memory ring): the frame
 * being read, and its lifecycle. Frames to write wait in its {@link WriteQueue}; messages are
 * matched to receives by its {@link MessageMatcher}.
 *
 * <p>The link is its own lock. The transport's progress thread serves it; a transport that posts
 * directly (TCP, as gloo's pairs do) also calls it from the posting thread, which then writes a
 * frame itself and finds a message that has already arrived without waking anyone. Transfers
 * finished under the lock are settled after it is released, so a future's dependent stages never
 * run while a link is held.
 */
final class Link {

    private static final Logger logger = LoggerFactory.getLogger(Link.class);

    /** A non-blocking byte stream to the peer. */
    interface Channel {
        /**
         * Reads what is available.
         *
         * @param dst where the bytes go
         * @return the bytes read, 0 if none is available, -1 once the peer has closed
         * @throws IOException if the stream failed
         */
        int read(ByteBuffer dst) throws IOException;

        /**
         * Writes what fits now.
         *
         * @param srcs the bytes
         * @throws IOException if the stream failed
         */
        void write(ByteBuffer[] srcs) throws IOException;

        /**
         * Says which events the progress loop should watch for.
         *
         * @param read whether to read
         * @param write whether to write
         */
        void interest(boolean read, boolean write);

        /** Closes the stream; idempotent. */
        void close();
    }

    /** Who is told when the peer leaves. */
    interface Owner {
        /**
         * Called when the peer left, before the transfers it failed are told.
         *
         * @param cause the failure
         * @param orderly whether the peer said goodbye
         * @return the failure to give those transfers: {@code cause}, or one that explains it
         */
        CommunicationException onPeerGone(CommunicationException cause, boolean orderly);

        /**
         * Called, without the link's lock, for each all-to-all message that came before its
         * receive: its receive may be posted on another transport, for another size.
         *
         * @param peer the sender
         * @param frame the message's frame
         */
        void onUnmatched(int peer, Frame frame);
    }

    /** A frame waiting to be written: its header, its body, and whom to tell when done. */
    record OutFrame(ByteBuffer[] buffers, Transfer transfer) {}

    /** A receive posted before its message arrived. */
    record PostedRecv(
            long slot,
            OpSignature signature,
            ByteBuffer into,
            Transfer transfer,
            Reducer reducer) {}

    /** Size of the buffer a reducing receive streams through (it stays in cache). */
    static final int BOUNCE_BYTES = 256 * 1024;

    final int peer;
    private final Channel channel;
    private final Owner owner;
    // The roles below share the link's lock; the transfers they finish are settled after it.
    private final Settlements settlements = new Settlements();
    private final WriteQueue out;
    private final MessageMatcher matcher;
    private final ByteBuffer header =
            ByteBuffer.allocateDirect(Frame.HEADER_BYTES).order(ByteOrder.LITTLE_ENDIAN);

    /** Early collective messages up to this size are stashed; larger ones wait in the socket. */
    static final int STASH_LIMIT = 64 * 1024;

    private Frame inFrame; // the frame whose body is being read, or null while reading a header
    private boolean parked; // inFrame's body waits in the socket for its receive to be posted
    private ByteBuffer inBody;
    private PostedRecv inRecv; // where inBody goes, or null when it is stashed
    private ByteBuffer bounce; // a reducing receive's staging buffer, allocated on first use
    private int reduced; // bytes of the current reducing receive already reduced
    private CommunicationException closedCause; // why the peer can no longer be reached
    // Reading failed mid-stream (a mismatch, a malformed frame, no memory for a body): where the
    // next frame starts is lost, so no thread reads on until the transport's abort closes the link.
    private boolean halted;
    private Gone gone; // the peer left, and the owner has not been told yet
    private List<Frame> unmatched; // all-to-all messages with no receive, for the owner to check

    /** The peer's departure, to tell the owner once the lock is released. */
    private record Gone(CommunicationException cause, boolean orderly) {}

    Link(int peer, Channel channel, Owner owner) {
        this.peer = peer;
        this.channel = channel;
        this.owner = owner;
        this.out = new WriteQueue(channel, settlements);
        this.matcher = new MessageMatcher(peer, settlements);
    }

    // Entry points: each takes the lock, and settles what it finished once it has let go.

    /**
     * Queues a frame and writes what the stream takes now.
     *
     * @param frame the frame
     * @throws CommunicationException if the stream failed
     */
    void send(OutFrame frame) {
        try {
            synchronized (this) {
                postSend(frame);
            }
        } finally {
            settle();
        }
    }

    /**
     * Posts a receive: completes it at once from a message already here, or reads it when it comes.
     *
     * @param r the receive
     * @throws CommunicationException if the message does not match, or the peer skipped ahead
     */
    void receive(PostedRecv r) {
        try {
            synchronized (this) {
                postRecv(r);
            }
        } finally {
            settle();
        }
    }

    /**
     * Serves the stream's events.
     *
     * @param readable whether bytes (or the end of the stream) may be there to read
     * @param writable whether queued frames may be written
     * @throws IOException if the stream failed
     */
    void serve(boolean readable, boolean writable) throws IOException {
        try {
            synchronized (this) {
                if (closedCause != null) {
                    return; // closed by a posting thread since the events were seen
                }
                if (readable) {
                    onReadable();
                }
                if (writable && closedCause == null) {
                    flush();
                }
            }
        } finally {
            settle();
        }
    }

    /**
     * Closes the link for an abort, first telling the peer why when no frame is half written.
     *
     * @param cause the abort's cause
     * @param notice the abort frame to send, best effort, in one non-blocking write
     */
    void abort(CommunicationException cause, ByteBuffer[] notice) {
        try {
            synchronized (this) {
                if (closedCause != null) {
                    return;
                }
                if (out.isEmpty()) {
                    try {
                        channel.write(notice);
                    } catch (IOException e) {
                        logger.debug("telling rank {} of the abort failed", peer, e);
                    }
                }
                shut(cause);
            }
        } finally {
            settle();
        }
    }

    /**
     * Fails everything pending on this link and every later post; closes the stream.
     *
     * @param e the reason
     */
    void close(CommunicationException e) {
        try {
            synchronized (this) {
                shut(e);
            }
        } finally {
            settle();
        }
    }

    synchronized boolean isClosed() {
        return closedCause != null;
    }

    /**
     * Returns the receive posted for {@code slot} whose message has not begun to arrive, if any.
     *
     * @param slot the slot
     * @return the receive, or {@code null}
     */
    synchronized PostedRecv posted(long slot) {
        return matcher.peekPosted(slot);
    }

    /**
     * Returns the message for {@code slot} that has arrived, or begun to, with no receive posted
     * here for it: stashed, parked in the stream, or being read into a stash.
     *
     * @param slot the slot
     * @return its frame, or {@code null}
     */
    synchronized Frame arrived(long slot) {
        if (inFrame != null
                && inRecv == null
                && inFrame.kind == Frame.DATA
                && inFrame.slot == slot) {
            return inFrame;
        }
        return matcher.peekStashed(slot);
    }

    /** Whether a transfer is under way or awaited on this link (then the peer's bytes are due). */
    synchronized boolean isActive() {
        return !out.isEmpty() || matcher.hasPosted() || inFrame != null;
    }

    /**
     * Tells the owner if the peer left, then completes the transfers finished under the lock; never
     * called holding the lock, since the owner's abort takes every link's in turn.
     */
    private void settle() {
        List<Settlements.Settled> done;
        Gone left;
        List<Frame> strays;
        synchronized (this) {
            if (settlements.isEmpty() && gone == null && unmatched == null) {
                return;
            }
            done = settlements.drain();
            left = gone;
            gone = null;
            strays = unmatched;
            unmatched = null;
        }
        // The owner first: its abort may explain the loss (a reason the peer left in the store),
        // and the transfers the loss failed should tell their waiters that reason.
        CommunicationException reported =
                left == null ? null : owner.onPeerGone(left.cause(), left.orderly());
        for (Settlements.Settled d : done) {
            if (d.failure() == null) {
                d.transfer().complete();
            } else {
                d.transfer()
                        .fail(left != null && d.failure() == left.cause() ? reported : d.failure());
            }
        }
        if (strays != null) {
            for (Frame f : strays) {
                owner.onUnmatched(peer, f);
            }
        }
    }

    // Below, everything runs holding the lock.

    private void postSend(OutFrame frame) {
        if (closedCause != null) {
            settlements.failed(frame.transfer(), closedCause);
            return;
        }
        out.add(frame);
        try {
            flush();
        } catch (IOException e) {
            throw new LinkLostException(
                    "the connection to rank " + peer + " failed: " + e.getMessage(), peer, e);
        }
    }

    /** Writes queued frames until the socket is full; called when posting and when writable. */
    private void flush() throws IOException {
        out.flush();
        updateInterest();
    }

    private void updateInterest() {
        channel.interest(!parked && !halted, !out.isEmpty());
    }

    private void postRecv(PostedRecv r) {
        // A message already here is delivered first, even one that came before a goodbye.
        MessageMatcher.Stashed s = matcher.takeStashed(r.slot());
        if (s != null) {
            matcher.checkMatch(r, s.frame());
            deliver(r, s.body());
            return;
        }
        if (closedCause != null) {
            settlements.failed(r.transfer(), closedCause);
            return;
        }
        if (parked && inFrame.slot == r.slot()) {
            // The message is in the socket already: read it straight into the receive.
            matcher.checkMatch(r, inFrame);
            beginBody(r);
            parked = false;
            updateInterest();
            try {
                onReadable();
            } catch (IOException e) {
                throw new LinkLostException(
                        "the connection to rank " + peer + " failed: " + e.getMessage(), peer, e);
            }
            return;
        }
        if (parked && !Frame.isCollective(r.slot())) {
            // A point-to-point message may sit behind the parked collective one (an isend
            // after an allReduceAsync): stash the collective message to get at it.
            inBody = stashBuffer(inFrame);
            parked = false;
            updateInterest();
        }
        if (Frame.isCollective(r.slot())) {
            matcher.checkNotSkipped(r, parked ? inFrame : null);
        }
        matcher.post(r);
    }

    /**
     * Records the collective this rank now runs, and checks the peer's early messages against it.
     *
     * @param seq its sequence number
     * @param sig its signature
     * @throws CommunicationException if an early message of the peer's disagrees
     */
    synchronized void begin(long seq, OpSignature sig) {
        matcher.begin(seq, sig, parked ? inFrame : null);
    }

    /** Reads whatever the socket holds, completing receives and stashing early messages. */
    private void onReadable() throws IOException {
        if (halted) {
            return;
        }
        try {
            readFrames();
        } catch (IOException | RuntimeException e) {
            halted = true;
            updateInterest();
            throw e;
        }
    }

    private void readFrames() throws IOException {
        while (true) {
            if (inFrame == null) {
                if (channel.read(header) < 0) {
                    lost("lost the connection to rank " + peer + " (its process died?)");
                    return;
                }
                if (header.hasRemaining()) {
                    return;
                }
                header.flip();
                Frame f = Frame.decode(header, peer);
                header.clear();
                startBody(f);
            }
            if (parked) {
                return;
            }
            int more = inRecv != null && inRecv.reducer() != null ? readReducing() : readBody();
            if (more < 0) {
                lost("lost the connection to rank " + peer + " mid-message (its process died?)");
                return;
            } else if (more > 0) {
                return;
            }
            finishBody();
            if (closedCause != null) {
                return; // the frame was a goodbye
            }
        }
    }

    // The frame becomes the one being read only once its body has somewhere to go: a failed
    // allocation must not leave a frame with no buffer to read its body into.
    private void startBody(Frame f) {
        inRecv = null;
        if (f.kind == Frame.DATA) {
            PostedRecv r = matcher.takePosted(f.slot);
            if (r != null) {
                matcher.checkMatch(r, f);
                beginBody(r);
                inFrame = f;
                return;
            }
            if (Frame.isCollective(f.slot)) {
                matcher.checkEarly(f);
                if (f.signature.opcode() == OpSignature.ALL_TO_ALL) {
                    if (unmatched == null) {
                        unmatched = new ArrayList<>(2);
                    }
                    unmatched.add(f);
                }
            }
        }
        if (f.kind == Frame.DATA
                && Frame.isCollective(f.slot)
                && f.length > STASH_LIMIT
                && !matcher.awaitsPointToPoint()) {
            // A large early message waits in the stream (its sender waits too) rather than in a
            // copy: collectives post their receives in the order their peers send.
            inFrame = f;
            parked = true;
            updateInterest();
            return;
        }
        inBody = stashBuffer(f);
        inFrame = f;
    }

    /**
     * Allocates the buffer that holds a message until its receive is posted: direct above {@link
     * #STASH_LIMIT}, where the socket reads into it without a copy.
     *
     * @throws CommunicationException naming the peer, the message and the cause if there is no
     *     memory for it (a large early message beyond {@code -XX:MaxDirectMemorySize}); the link's
     *     state is unchanged
     */
    private ByteBuffer stashBuffer(Frame f) {
        int length = (int) f.length;
        try {
            return length > STASH_LIMIT
                    ? ByteBuffer.allocateDirect(length)
                    : ByteBuffer.allocate(length);
        } catch (OutOfMemoryError e) {
            throw new CommunicationException(
                    "cannot hold the "
                            + length
                            + "-byte message rank "
                            + peer
                            + " sent for "
                            + f.signature
                            + " until its receive is posted: "
                            + e,
                    peer,
                    e);
        }
    }

    private void finishBody() {
        Frame f = inFrame;
        inFrame = null;
        if (f.kind == Frame.ABORT) {
            // Closed here, under the lock: whichever thread reads on, the peer's reason is the
            // failure the owner hears first, not the lost connection that follows it.
            String reason = StandardCharsets.UTF_8.decode(inBody.flip()).toString();
            peerGone("rank " + peer + " aborted its process group: " + reason, false);
        } else if (f.kind == Frame.BYE) {
            peerGone("rank " + peer + " has destroyed its process group", true);
        } else if (inRecv != null) {
            settlements.finished(inRecv.transfer());
        } else {
            PostedRecv late = matcher.takePosted(f.slot);
            if (late != null) {
                // Its receive was posted while this body was being read into a stash buffer.
                matcher.checkMatch(late, f);
                deliver(late, inBody.flip());
            } else {
                matcher.stash(f, inBody.flip());
            }
        }
        inRecv = null;
        inBody = null;
    }

    /**
     * Starts reading the current frame's body into (or reducing it into) a posted receive, no
     * longer in the matcher: should that fail, the receive fails here, as no abort would find it.
     */
    private void beginBody(PostedRecv r) {
        if (r.reducer() == null) {
            inBody = r.into().duplicate();
        } else {
            if (bounce == null) {
                try {
                    bounce = ByteBuffer.allocateDirect(BOUNCE_BYTES).order(ByteOrder.LITTLE_ENDIAN);
                } catch (OutOfMemoryError e) {
                    CommunicationException ce =
                            new CommunicationException(
                                    "cannot reduce the message of rank "
                                            + peer
                                            + " for "
                                            + r.signature()
                                            + ": no memory for its "
                                            + BOUNCE_BYTES
                                            + "-byte staging buffer: "
                                            + e,
                                    peer,
                                    e);
                    settlements.failed(r.transfer(), ce);
                    throw ce;
                }
            }
            bounce.clear();
            reduced = 0;
        }
        inRecv = r;
    }

    /** Reads the body; returns -1 at end of stream, 1 if more is due, 0 once complete. */
    private int readBody() throws IOException {
        while (inBody.hasRemaining()) {
            int n = channel.read(inBody);
            if (n <= 0) {
                return n < 0 ? -1 : 1;
            }
        }
        return 0;
    }

    /**
     * Streams the body through the bounce buffer, reducing whole elements into the receive as they
     * arrive: no copy of the message is ever made in memory. Returns as {@link #readBody()}.
     */
    private int readReducing() throws IOException {
        Reducer reducer = inRecv.reducer();
        int es = reducer.elementSize();
        int length = inRecv.into().remaining();
        while (reduced < length) {
            // The bounce holds a partial element's bytes from the last read at its front.
            bounce.limit(Math.min(bounce.capacity(), length - reduced));
            int n = channel.read(bounce);
            if (n < 0) {
                return -1;
            }
            int whole = bounce.position() / es * es;
            if (whole > 0) {
                reducer.reduce(inRecv.into(), reduced, bounce, 0, whole / es);
                reduced += whole;
                bounce.limit(bounce.position()).position(whole);
                bounce.compact();
            }
            if (n == 0) {
                return 1;
            }
        }
        return 0;
    }

    /** Completes a receive from a whole message already in memory. */
    private void deliver(PostedRecv r, ByteBuffer body) {
        if (r.reducer() == null) {
            r.into().duplicate().put(body);
        } else {
            int es = r.reducer().elementSize();
            r.reducer().reduce(r.into(), 0, body, body.position(), body.remaining() / es);
        }
        settlements.finished(r.transfer());
    }

    /** The peer left: fails what waits on it; the transport decides whether that is fatal. */
    private void peerGone(String reason, boolean orderly) {
        peerGone(new CommunicationException(reason, peer), orderly);
    }

    /** The connection ended without a word from the peer: its reason may be in the store. */
    private void lost(String reason) {
        peerGone(new LinkLostException(reason, peer, null), false);
    }

    private void peerGone(CommunicationException e, boolean orderly) {
        shut(e);
        gone = new Gone(e, orderly);
    }

    private void shut(CommunicationException e) {
        if (closedCause == null) {
            closedCause = e;
        }
        channel.close();
        if (inRecv != null) {
            // cut off mid-body: it is no longer in the posted map
            settlements.failed(inRecv.transfer(), e);
        }
        inRecv = null;
        inFrame = null;
        inBody = null;
        parked = false;
        matcher.failPosted(e);
        out.failAll(e);
    }
}
