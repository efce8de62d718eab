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
import ai.djl.distributed.backend.cpu.transport.Link.PostedRecv;

import java.nio.ByteBuffer;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Matches one peer's messages to this rank's receives: the receives posted before their message
 * came, the messages that came before their receive, and the checks that both sides called the same
 * collectives in the same order. Not thread-safe: guarded by its {@link Link}'s lock.
 */
final class MessageMatcher {

    /** A message that arrived before its receive was posted. */
    record Stashed(Frame frame, ByteBuffer body) {}

    private final int peer;
    private final Settlements settlements;
    private final Map<Long, PostedRecv> posted = new HashMap<>();
    private final Map<Long, Stashed> stash = new HashMap<>();
    // What this rank called for its last few collectives, to name both sides of a mismatch.
    private final Map<Long, OpSignature> recent =
            new LinkedHashMap<>() {
                private static final long serialVersionUID = 1L;

                @Override
                protected boolean removeEldestEntry(Map.Entry<Long, OpSignature> eldest) {
                    return size() > 16;
                }
            };

    MessageMatcher(int peer, Settlements settlements) {
        this.peer = peer;
        this.settlements = settlements;
    }

    /**
     * Takes the message that came for a slot before its receive, if any.
     *
     * @param slot the receive's slot
     * @return the message, or {@code null}
     */
    Stashed takeStashed(long slot) {
        return stash.remove(slot);
    }

    /**
     * Returns the message that came for a slot before its receive, if any, leaving it stashed.
     *
     * @param slot the slot
     * @return its frame, or {@code null}
     */
    Frame peekStashed(long slot) {
        Stashed s = stash.get(slot);
        return s == null ? null : s.frame();
    }

    void stash(Frame frame, ByteBuffer body) {
        stash.put(frame.slot, new Stashed(frame, body));
    }

    /**
     * Takes the receive posted for a slot, if any.
     *
     * @param slot the message's slot
     * @return the receive, or {@code null}
     */
    PostedRecv takePosted(long slot) {
        return posted.remove(slot);
    }

    /**
     * Returns the receive posted for a slot, if any, leaving it posted.
     *
     * @param slot the slot
     * @return the receive, or {@code null}
     */
    PostedRecv peekPosted(long slot) {
        return posted.get(slot);
    }

    void post(PostedRecv r) {
        posted.put(r.slot(), r);
    }

    boolean hasPosted() {
        return !posted.isEmpty();
    }

    /** Whether a point-to-point receive is posted, perhaps for a message behind this one. */
    boolean awaitsPointToPoint() {
        for (long slot : posted.keySet()) {
            if (!Frame.isCollective(slot)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Messages from one peer arrive in its order of collectives: a later collective's message
     * already here (parked in the stream or stashed) before this receive's means the peer skipped
     * this one.
     *
     * @param r a collective receive being posted
     * @param parked the frame whose body waits in the stream, or {@code null}
     * @throws CommunicationException naming both collectives if the peer skipped
     */
    void checkNotSkipped(PostedRecv r, Frame parked) {
        if (parked != null && Frame.seqOf(parked.slot) > Frame.seqOf(r.slot())) {
            throw skipped(r, parked);
        }
        for (Stashed later : stash.values()) {
            if (Frame.isCollective(later.frame().slot)
                    && Frame.seqOf(later.frame().slot) > Frame.seqOf(r.slot())) {
                throw skipped(r, later.frame());
            }
        }
    }

    /**
     * A collective message with no receive posted: it must carry this rank's signature for that
     * collective, and no earlier collective's receive may still wait (the peer skipped it).
     *
     * @param f the message's frame
     * @throws CommunicationException naming both sides if not
     */
    void checkEarly(Frame f) {
        checkCurrent(f);
        for (PostedRecv earlier : posted.values()) {
            if (Frame.isCollective(earlier.slot())
                    && Frame.seqOf(earlier.slot()) < Frame.seqOf(f.slot)) {
                throw skipped(earlier, f);
            }
        }
    }

    /**
     * Records the collective this rank now runs, and checks the peer's early messages against it.
     *
     * @param seq its sequence number
     * @param sig its signature
     * @param parked the frame whose body waits in the stream, or {@code null}
     * @throws CommunicationException if an early message of the peer's disagrees
     */
    void begin(long seq, OpSignature sig, Frame parked) {
        recent.put(seq, sig);
        for (Stashed st : stash.values()) {
            checkCurrent(st.frame());
        }
        if (parked != null) {
            checkCurrent(parked);
        }
    }

    /**
     * A receive and the message for its slot must agree on signature and length; if not, the
     * receive (no longer posted) fails here, since the abort that follows will not see it.
     *
     * @param r the receive
     * @param f the message's frame
     * @throws CommunicationException naming both sides if they disagree
     */
    void checkMatch(PostedRecv r, Frame f) {
        if (!r.signature().equals(f.signature) || r.into().remaining() != f.length) {
            CommunicationException e =
                    Mismatch.differentMessage(
                            peer,
                            r.slot(),
                            r.signature(),
                            r.into().remaining(),
                            f.signature,
                            f.length);
            settlements.failed(r.transfer(), e);
            throw e;
        }
    }

    /**
     * Fails every posted receive and forgets them; messages already here stay, to be delivered.
     *
     * @param e why
     */
    void failPosted(CommunicationException e) {
        posted.values().forEach(r -> settlements.failed(r.transfer(), e));
        posted.clear();
    }

    /**
     * A peer's message for a collective this rank runs or has recently run (the last 16) must carry
     * the signature this rank called it with.
     */
    private void checkCurrent(Frame f) {
        if (f.kind != Frame.DATA || !Frame.isCollective(f.slot)) {
            return;
        }
        long seq = Frame.seqOf(f.slot);
        OpSignature mine = recent.get(seq);
        if (mine != null && !mine.equals(f.signature)) {
            throw Mismatch.differentCall(peer, seq, mine, f.signature);
        }
    }

    private CommunicationException skipped(PostedRecv mine, Frame theirs) {
        return Mismatch.skipped(
                peer,
                Frame.seqOf(mine.slot()),
                mine.signature(),
                Frame.seqOf(theirs.slot),
                theirs.signature);
    }
}
