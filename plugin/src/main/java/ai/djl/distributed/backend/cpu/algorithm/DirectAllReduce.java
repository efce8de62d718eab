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
package ai.djl.distributed.backend.cpu.algorithm;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.backend.cpu.transport.PeerMemory;
import ai.djl.distributed.backend.cpu.transport.ShmBoard;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.locks.LockSupport;

/**
 * All-reduce through the peers' memory ({@link PeerMemory}), for ranks on one host. The buffer is
 * split into one block per rank, and each rank owns one: a chunk at a time, it reads that chunk of
 * its block from every peer, reduces it into its own copy, and writes the result straight into
 * every peer's copy while the chunk is still in cache. Nobody else touches a rank's block in any
 * buffer, so the ranks need no step-by-step coordination; and every byte crosses between processes
 * once each way, where a ring through shared memory copies it into a channel and out again, on the
 * caller's thread alone.
 *
 * <p>Two rounds on the group's shared-memory board frame it: each rank posts its buffer's address,
 * and, once it has written its block everywhere, "done". A rank returns when every peer is done:
 * its buffer is complete, and no peer reads or writes it any longer. Each block is reduced by its
 * owner alone, so every rank ends with the same bits.
 *
 * <p>On a failure after the addresses are out, peers may still be copying. A rank writes into its
 * peers only between {@link ShmBoard#beginPeerWrites()}, which fails once a peer has aborted, and
 * {@link ShmBoard#endPeerWrites()}; a failing rank aborts the group (which marks the board), then
 * waits until no live peer is between the two before its buffer goes back to the caller. So no peer
 * writes into a buffer its owner has handed back, however late the peer is scheduled, unless it is
 * stalled past the collective's deadline (the wait is bounded, as every wait is, and says so in the
 * log). A peer may still read the buffer after that, into its own, whose collective then fails too.
 */
public final class DirectAllReduce {

    private static final Logger logger = LoggerFactory.getLogger(DirectAllReduce.class);

    /** Piece of a peer's block read and reduced at a time: it and its accumulator fit in L2. */
    static final int CHUNK_BYTES = 1024 * 1024;

    /**
     * How long past the collective's deadline a failing rank waits for peers still writing into its
     * buffer: less than the slack {@code Work.waitFor()} allows past the deadline.
     */
    static final long PEER_WRITES_GRACE = 2_000_000_000L;

    private DirectAllReduce() {}

    /**
     * Reduces {@code data} across ranks in place.
     *
     * @param ctx the collective; its transport must offer {@link PeerMemory} and a board
     * @param memory the peers' memory
     * @param data the elements, little-endian, position 0, limit the message size
     * @param count the number of elements, at least the group's size
     */
    public static void run(CollectiveContext ctx, PeerMemory memory, ByteBuffer data, int count) {
        if (!data.isDirect()) {
            // A peer can only read memory with an address; work on a direct copy.
            ByteBuffer copy = ctx.scratch(1, data.remaining());
            copy.put(0, data, 0, data.remaining());
            run(ctx, memory, copy, count);
            data.put(0, copy, 0, data.remaining());
            return;
        }
        int p = ctx.size();
        int es = ctx.elementSize();
        int[] counts = Ring.balancedCounts(count, p);
        int[] offsets = new int[p];
        for (int b = 1; b < p; b++) {
            offsets[b] = offsets[b - 1] + counts[b - 1] * es;
        }

        try {
            // Once this rank's address is posted, a peer may write into its buffer.
            long[] addresses = exchangeAddresses(ctx, PeerMemory.address(data));
            exchangeBlocks(ctx, memory, data, counts, offsets, addresses);
        } catch (RuntimeException | Error e) {
            try {
                ctx.abort(
                        e instanceof CommunicationException ce
                                ? ce
                                : new CommunicationException("all-reduce failed: " + e, -1, e));
            } finally {
                awaitPeersDoneWriting(ctx, memory);
            }
            throw e;
        } finally {
            Reference.reachabilityFence(data);
        }
    }

    /**
     * After this rank's abort (which marked the board): waits until no live peer may still write
     * into this rank's buffer. Bounded, like every wait of the collective, by its deadline, plus
     * {@link #PEER_WRITES_GRACE} when the deadline is what failed it: a caller gives up on the
     * collective a few seconds after the deadline, and must not find it still running. A peer still
     * between its marks then is stalled (stopped, swapped out); it is reported.
     */
    private static void awaitPeersDoneWriting(CollectiveContext ctx, PeerMemory memory) {
        ShmBoard board = ctx.board();
        // From the deadline, not from now: the abort before this may have waited on the store,
        // and the caller's wait ends a fixed slack after the deadline.
        long from = ctx.deadline().nanos();
        long end =
                from > Long.MAX_VALUE - PEER_WRITES_GRACE
                        ? Long.MAX_VALUE
                        : from + PEER_WRITES_GRACE;
        // An interrupt must not turn the wait into a spin (parking returns at once while the
        // status is set); it is restored on return.
        boolean interrupted = Thread.interrupted();
        try {
            for (int peer = 0; peer < ctx.size(); peer++) {
                if (peer == ctx.rank()) {
                    continue;
                }
                while (board.isWritingIntoPeers(peer) && memory.isAlive(peer)) {
                    if (System.nanoTime() - end > 0) {
                        logger.warn(
                                "rank {}: rank {} was still writing into this rank's buffer when"
                                        + " the failed all-reduce's deadline passed; the buffer"
                                        + " goes back to the caller anyway",
                                ctx.rank(),
                                peer);
                        break;
                    }
                    // A peer writes at most one chunk per rank before it sees the abort.
                    LockSupport.parkNanos(50_000L);
                    interrupted |= Thread.interrupted();
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private static void exchangeBlocks(
            CollectiveContext ctx,
            PeerMemory memory,
            ByteBuffer data,
            int[] counts,
            int[] offsets,
            long[] addresses) {
        int p = ctx.size();
        int r = ctx.rank();
        int es = ctx.elementSize();
        ShmBoard board = ctx.board();
        ByteBuffer bounce = ctx.scratch(0, Math.min(CHUNK_BYTES, counts[r] * es));
        int chunkElems = Math.max(1, CHUNK_BYTES / es);
        for (int e = 0; e < counts[r]; e += chunkElems) {
            // A failed group may have handed a peer's buffer back to its caller: stop copying.
            ctx.checkHealthy();
            int n = Math.min(chunkElems, counts[r] - e);
            int at = offsets[r] + e * es;
            for (int k = 1; k < p; k++) {
                int peer = (r + k) % p;
                memory.read(peer, addresses[peer] + at, bounce.clear().limit(n * es));
                ctx.reduce(data, at, bounce, 0, n);
            }
            ByteBuffer reduced = CollectiveContext.slice(data, at, n * es);
            board.beginPeerWrites(); // fails if a peer has aborted: its buffer may be freed
            try {
                for (int k = 1; k < p; k++) {
                    int peer = (r + k) % p;
                    memory.write(peer, addresses[peer] + at, reduced);
                }
            } finally {
                board.endPeerWrites();
            }
        }

        // Our buffer is the peers' until each has written its block into it.
        ctx.exchangeOnBoard(ByteBuffer.allocate(0));
    }

    /** Posts this rank's buffer address on the board; returns every rank's. */
    private static long[] exchangeAddresses(CollectiveContext ctx, long mine) {
        ByteBuffer out = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(0, mine);
        ByteBuffer[] all = ctx.exchangeOnBoard(out);
        long[] addresses = new long[all.length];
        for (int j = 0; j < all.length; j++) {
            addresses[j] = all[j].order(ByteOrder.LITTLE_ENDIAN).getLong(0);
        }
        return addresses;
    }
}
