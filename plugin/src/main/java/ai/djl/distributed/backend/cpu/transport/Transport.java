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

import java.nio.ByteBuffer;

/**
 * Moves bytes between the ranks of one group; it knows nothing of collectives. Algorithms post
 * sends and receives, each naming a peer, a slot and the operation's signature, and wait on the
 * returned {@link Transfer}s. Every message carries its slot and signature: a receive matches the
 * one message with its slot from its peer; a message that arrives before its receive is posted is
 * held until it is. A message whose signature or length differs from its receive's fails the
 * transport with a {@link CommunicationException} naming both sides.
 *
 * <p>Collective slots (non-negative) increase along each rank's sequence of collectives; point to
 * point slots are negative (see {@link #p2pSlot(int, int)}).
 *
 * <p>Thread-safe: any thread may post; transfers complete on the transport's own I/O thread. A
 * failure of any link (a peer that dies, a malformed frame, a mismatch) fails the whole transport:
 * every pending and later transfer fails with that cause. {@link #close()} says goodbye to every
 * peer and releases the sockets; it is idempotent.
 */
public interface Transport extends AutoCloseable {

    /** Bits of a collective slot that number the messages within one collective. */
    int INDEX_BITS = 24;

    /**
     * Returns the slot of a collective's message.
     *
     * @param seq the collective's sequence number in its group
     * @param index the message's index within the collective, below 2^24
     * @return the slot
     */
    static long collectiveSlot(long seq, int index) {
        return (seq << INDEX_BITS) | index;
    }

    /**
     * Returns the slot of a point-to-point message.
     *
     * @param tag the user's tag, non-negative
     * @param counter the number of earlier messages with this tag between the same two ranks
     * @return the slot, negative
     */
    static long p2pSlot(int tag, int counter) {
        return Long.MIN_VALUE | ((long) tag << 32) | (counter & 0xFFFFFFFFL);
    }

    /**
     * Returns this rank.
     *
     * @return the rank, in {@code [0, size)}
     */
    int getRank();

    /**
     * Returns the number of ranks.
     *
     * @return the size
     */
    int getSize();

    /**
     * Returns direct access to the peers' memory, where every rank can read every other's ({@link
     * PeerMemory}); large collectives then copy once instead of through messages.
     *
     * @return the peer memory, or null (the default) where the ranks cannot read each other's
     */
    default PeerMemory peerMemory() {
        return null;
    }

    /**
     * Returns the shared-memory board for small collectives, where every rank shares this host.
     *
     * @return the board, or null (the default)
     */
    default ShmBoard board() {
        return null;
    }

    /**
     * Posts a send of {@code data}'s remaining bytes. The caller must not change those bytes until
     * the transfer completes; {@code data}'s position and limit are not changed.
     *
     * @param peer the receiving rank, not this rank
     * @param slot the message's slot
     * @param signature the operation it belongs to
     * @param data the bytes
     * @return the transfer, complete once the bytes are handed to the peer's link
     */
    Transfer send(int peer, long slot, OpSignature signature, ByteBuffer data);

    /**
     * Posts a receive into {@code into}'s remaining bytes; the message must be exactly that long.
     * {@code into}'s position and limit are not changed.
     *
     * @param peer the sending rank, not this rank
     * @param slot the message's slot
     * @param signature the operation it belongs to, as this rank sees it
     * @param into where the bytes go
     * @return the transfer, complete once the bytes are in {@code into}
     */
    Transfer recv(int peer, long slot, OpSignature signature, ByteBuffer into);

    /**
     * Posts a receive that reduces the message into {@code acc}'s remaining bytes as it arrives,
     * instead of storing it: {@code acc[i] = op(acc[i], message[i])}. The message must be exactly
     * as long as {@code acc}'s remaining bytes. {@code acc} must not be sent, read or written by
     * anyone else until the transfer completes.
     *
     * @param peer the sending rank, not this rank
     * @param slot the message's slot
     * @param signature the operation it belongs to, as this rank sees it
     * @param acc the accumulator
     * @param reducer how to combine elements
     * @return the transfer, complete once every element is reduced
     */
    Transfer recvReduce(
            int peer, long slot, OpSignature signature, ByteBuffer acc, Reducer reducer);

    /**
     * Tells the transport which collective this rank now runs, so that a peer's message for the
     * same collective with another signature is reported, even when this rank expects no message
     * from that peer: at once when the message arrives later; when it came first, at this rank's
     * next send, receive or {@link #poke()}.
     *
     * @param seq the collective's sequence number
     * @param signature what this rank called
     */
    void beginCollective(long seq, OpSignature signature);

    /**
     * Makes the transport apply the collectives begun so far now, so that a mismatch with a message
     * that already arrived is reported. Sends and receives do it; a collective that moves its data
     * another way (the {@link ShmBoard}) calls it before it waits long.
     */
    default void poke() {}

    /**
     * Fails the transport: every pending and later transfer fails with {@code cause}, and the peers
     * are told (best effort) so that they fail too instead of waiting for their timeout.
     *
     * <p>Called from any thread but the transport's own, it returns only once the transport no
     * longer reads into or writes from the buffers of the transfers it failed (bounded by a few
     * seconds), so that the caller may then free them. Ignores interrupts while it waits, keeping
     * the thread's interrupt status.
     *
     * @param cause the failure
     */
    void abort(CommunicationException cause);

    /**
     * Returns the failure that aborted the transport.
     *
     * @return the failure, or null while the transport is healthy
     */
    CommunicationException getFailure();

    /** Says goodbye to the peers and releases the transport's sockets and thread; idempotent. */
    @Override
    void close();
}
