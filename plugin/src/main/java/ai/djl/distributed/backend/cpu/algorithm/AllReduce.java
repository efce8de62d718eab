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

import static ai.djl.distributed.backend.cpu.algorithm.CollectiveContext.slice;

import ai.djl.distributed.backend.cpu.transport.ShmBoard;
import ai.djl.distributed.backend.cpu.transport.Transfer;

import java.nio.ByteBuffer;

/**
 * All-reduce in place. Small messages go through the shared-memory board where the ranks share a
 * host ({@link ShmBoard}: one exchange, no thread hand-off), else recursive doubling (lg P
 * exchanges of the whole message: latency-optimal); large ones take the ring (bandwidth-optimal),
 * or, where the ranks share a host and may read each other's memory, direct copies ({@link
 * DirectAllReduce}). The choice depends only on the message size and on the group's transport,
 * which every rank agrees on, so every rank picks the same algorithm. Both leave bit-identical
 * results on every rank: each partial result is computed the same way everywhere, and the
 * reductions are commutative.
 */
public final class AllReduce {

    /**
     * Messages up to this size take the board or recursive doubling; larger ones the ring or direct
     * copies.
     */
    public static final int SMALL_BYTES = 64 * 1024;

    /**
     * Messages from this size take {@link DirectAllReduce} where the ranks can read each other's
     * memory: its fixed cost, two rounds on the board, is repaid by copying once.
     */
    public static final int DIRECT_BYTES = 256 << 10;

    private AllReduce() {}

    /**
     * Reduces {@code data} across ranks in place.
     *
     * @param ctx the collective
     * @param data the elements, little-endian, position 0, limit the message size
     * @param count the number of elements
     */
    public static void run(CollectiveContext ctx, ByteBuffer data, int count) {
        if (ctx.size() == 1) {
            return;
        }
        long bytes = (long) count * ctx.elementSize();
        if (bytes <= ShmBoard.SLOT_BYTES && ctx.hasBoard()) {
            onBoard(ctx, data, count);
        } else if (bytes <= SMALL_BYTES || count < ctx.size()) {
            recursiveDoubling(ctx, data, count);
        } else if (bytes >= DIRECT_BYTES && ctx.peerMemory() != null && ctx.hasBoard()) {
            DirectAllReduce.run(ctx, ctx.peerMemory(), data, count);
        } else {
            ring(ctx, data, count);
        }
    }

    private static void ring(CollectiveContext ctx, ByteBuffer data, int count) {
        int p = ctx.size();
        int es = ctx.elementSize();
        int[] counts = Ring.balancedCounts(count, p);
        ByteBuffer[] blocks = new ByteBuffer[p];
        int offset = 0;
        for (int b = 0; b < p; b++) {
            blocks[b] = slice(data, offset * es, counts[b] * es);
            offset += counts[b];
        }
        int next = Ring.reduceScatter(ctx, blocks, counts, 0, 0);
        Ring.allGather(ctx, blocks, (ctx.rank() + 1) % p, next);
    }

    /**
     * Every rank posts its message on the shared-memory board, then reduces all of them in rank
     * order: one exchange, no thread hand-off, and the same bits on every rank.
     */
    private static void onBoard(CollectiveContext ctx, ByteBuffer data, int count) {
        ByteBuffer[] all = ctx.exchangeOnBoard(data);
        data.put(0, all[0], 0, all[0].remaining());
        for (int r = 1; r < all.length; r++) {
            ctx.reduce(data, 0, all[r], 0, count);
        }
    }

    /**
     * Recursive doubling with MPICH's fold for sizes that are not powers of two: the first {@code 2
     * * rem} ranks pair up, the even one hands its data to the odd one and waits for the result,
     * and the remaining power of two ranks exchange and reduce, doubling the distance each step.
     */
    private static void recursiveDoubling(CollectiveContext ctx, ByteBuffer data, int count) {
        int p = ctx.size();
        int r = ctx.rank();
        ByteBuffer tmp = ctx.scratch(0, data.remaining());
        int p2 = Integer.highestOneBit(p);
        int rem = p - p2;
        int vr; // this rank's place among the p2 exchanging ranks, or -1 while folded away
        if (r < 2 * rem) {
            if (r % 2 == 0) {
                ctx.await(ctx.send(r + 1, 0, data));
                vr = -1;
            } else {
                ctx.await(ctx.recv(r - 1, 0, tmp));
                ctx.reduce(data, 0, tmp, 0, count);
                vr = r / 2;
            }
        } else {
            vr = r - rem;
        }
        if (vr >= 0) {
            int step = 1;
            for (int mask = 1; mask < p2; mask <<= 1, step++) {
                int vp = vr ^ mask;
                int partner = vp < rem ? vp * 2 + 1 : vp + rem;
                Transfer recv = ctx.recv(partner, step, tmp);
                Transfer send = ctx.send(partner, step, data);
                // The send reads data in place: reduce into it only once it has gone.
                ctx.await(recv, send);
                ctx.reduce(data, 0, tmp, 0, count);
            }
        }
        if (r < 2 * rem) {
            if (r % 2 == 0) {
                ctx.await(ctx.recv(r + 1, 63, data));
            } else {
                ctx.await(ctx.send(r - 1, 63, data));
            }
        }
    }
}
