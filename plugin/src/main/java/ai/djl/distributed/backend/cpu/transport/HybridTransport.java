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
 * Two transports between the same ranks of one host, each used where it is best: collective
 * messages up to {@link #SMALL_BYTES} and every point-to-point message go over TCP, whose receiver
 * the kernel wakes at once; larger collective messages go through shared memory, which copies at
 * memory speed but whose polling receiver may sleep a timer tick first. Sender and receiver pick by
 * the message's size, which they agree on (a size they disagree on is a mismatch, reported through
 * the signature every frame carries; in an all-to-all, whose signature carries no sizes, through
 * the message that came over the other transport for a receive posted on this one). Where the ranks
 * may read each other's memory, the large collectives that can use it do ({@link #peerMemory()}),
 * with the shared-memory transport's board ({@link #board()}) to say when.
 */
public final class HybridTransport implements Transport {

    /** Collective messages up to this size go over TCP. */
    public static final int SMALL_BYTES = 64 * 1024;

    private final Transport small;
    private final Transport large;
    private final PeerMemory peerMemory;

    /**
     * Combines two connected transports of the same ranks; closing this closes both.
     *
     * @param small the transport for small and point-to-point messages (TCP)
     * @param large the transport for large collective messages (shared memory)
     * @param peerMemory direct access to the peers' memory, or null where there is none
     */
    public HybridTransport(Transport small, Transport large, PeerMemory peerMemory) {
        this.small = small;
        this.large = large;
        this.peerMemory = peerMemory;
        if (small instanceof LinkTransport s && large instanceof LinkTransport l) {
            LinkTransport.pair(s, l);
        }
    }

    private Transport pick(long slot, int bytes) {
        return slot >= 0 && bytes > SMALL_BYTES ? large : small;
    }

    /** {@inheritDoc} */
    @Override
    public int getRank() {
        return small.getRank();
    }

    /** {@inheritDoc} */
    @Override
    public int getSize() {
        return small.getSize();
    }

    /** {@inheritDoc} */
    @Override
    public PeerMemory peerMemory() {
        return peerMemory;
    }

    /** {@inheritDoc} */
    @Override
    public ShmBoard board() {
        return large.board();
    }

    /** {@inheritDoc} */
    @Override
    public Transfer send(int peer, long slot, OpSignature signature, ByteBuffer data) {
        return pick(slot, data.remaining()).send(peer, slot, signature, data);
    }

    /** {@inheritDoc} */
    @Override
    public Transfer recv(int peer, long slot, OpSignature signature, ByteBuffer into) {
        return pick(slot, into.remaining()).recv(peer, slot, signature, into);
    }

    /** {@inheritDoc} */
    @Override
    public Transfer recvReduce(
            int peer, long slot, OpSignature signature, ByteBuffer acc, Reducer reducer) {
        return pick(slot, acc.remaining()).recvReduce(peer, slot, signature, acc, reducer);
    }

    /** {@inheritDoc} */
    @Override
    public void beginCollective(long seq, OpSignature signature) {
        small.beginCollective(seq, signature);
        large.beginCollective(seq, signature);
    }

    /** {@inheritDoc} */
    @Override
    public void poke() {
        small.poke();
        large.poke();
    }

    /**
     * {@inheritDoc}
     *
     * <p>Either half fails the other too, whoever aborts it: the first abort of a {@link
     * LinkTransport} aborts its sibling with the same cause ({@link LinkTransport#pair}), so that a
     * failure one half finds (a mismatch, a lost link) fails the transfers waiting on the other at
     * once. Aborting both here still matters: each returns only once its progress thread has let go
     * of the failed transfers' buffers.
     */
    @Override
    public void abort(CommunicationException cause) {
        small.abort(cause);
        // The first transport's failure, which may explain the cause: the second need not.
        CommunicationException first = small.getFailure();
        large.abort(first != null ? first : cause);
    }

    /** {@inheritDoc} */
    @Override
    public CommunicationException getFailure() {
        CommunicationException f = small.getFailure();
        if (f == null) {
            f = large.getFailure();
            if (f != null) {
                // One failed: the group is doomed; fail the other too, so nothing waits on it
                // (paired halves do it themselves as they abort; other transports may not).
                small.abort(f);
            }
        } else if (large.getFailure() == null) {
            large.abort(f);
        }
        return f;
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        try {
            small.close();
        } finally {
            large.close();
        }
    }
}
