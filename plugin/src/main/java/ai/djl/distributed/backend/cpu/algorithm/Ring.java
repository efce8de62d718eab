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

import ai.djl.distributed.backend.cpu.transport.Transfer;

import java.nio.ByteBuffer;

/**
 * The ring's two halves, bandwidth-optimal for large messages: a reduce-scatter and an all-gather
 * over blocks, each in {@code size - 1} steps in which every rank sends one block to its right
 * neighbour and receives one from its left (gloo's {@code allreduce_ring_chunked}, without its
 * double ring). Together they are the all-reduce: every byte crosses each link twice, 2S(P-1)/P in
 * all.
 *
 * <p>Reduce-scatter blocks go in segments of {@link #SEGMENT_BYTES}, each reduced into the
 * receiver's block as its bytes arrive (no copy of it is kept).
 */
public final class Ring {

    /** Size of the pieces a block travels in during the reduce-scatter (gloo's is 1 MiB too). */
    public static final int SEGMENT_BYTES = 1 << 20;

    private Ring() {}

    /**
     * Reduces {@code blocks} across ranks so that, afterwards, this rank's block {@code (rank + 1 +
     * shift) mod size} holds the reduction of every rank's copy of that block. Other blocks hold
     * partial results.
     *
     * @param ctx the collective
     * @param blocks this rank's accumulators, one per block, little-endian
     * @param counts the element count of each block, equal on every rank
     * @param shift 0 to end owning block {@code rank + 1}, -1 to end owning block {@code rank}
     * @param indexBase the first message index to use
     * @return the next free message index
     */
    public static int reduceScatter(
            CollectiveContext ctx, ByteBuffer[] blocks, int[] counts, int shift, int indexBase) {
        int p = ctx.size();
        int r = ctx.rank();
        int es = ctx.elementSize();
        int segElems = Math.max(1, SEGMENT_BYTES / es);
        int maxCount = max(counts);
        int maxSeg = segments(maxCount, segElems);
        int right = (r + 1) % p;
        int left = (r + p - 1) % p;
        for (int s = 0; s < p - 1; s++) {
            int sb = Math.floorMod(r - s + shift, p);
            int rb = Math.floorMod(r - s - 1 + shift, p);
            int base = indexBase + s * maxSeg;
            // 1. Post the receives of the left neighbour's block, segment by segment: each
            // reduces into our copy of that block as its bytes arrive.
            Transfer[] recvs = new Transfer[segments(counts[rb], segElems)];
            for (int g = 0; g < recvs.length; g++) {
                int n = segmentLength(counts[rb], segElems, g);
                recvs[g] =
                        ctx.recvReduce(
                                left, base + g, slice(blocks[rb], g * segElems * es, n * es));
            }
            // 2. Send our block to the right neighbour.
            Transfer[] sends = new Transfer[segments(counts[sb], segElems)];
            for (int g = 0; g < sends.length; g++) {
                int n = segmentLength(counts[sb], segElems, g);
                sends[g] = ctx.send(right, base + g, slice(blocks[sb], g * segElems * es, n * es));
            }
            // 3. The next step sends the block reduced here; the one sent here is rewritten by
            // the all-gather: wait for both.
            ctx.await(recvs);
            ctx.await(sends);
        }
        return indexBase + (p - 1) * maxSeg;
    }

    /**
     * Circulates blocks so that every rank ends with every block: this rank starts owning block
     * {@code owned}, its left neighbour block {@code owned - 1}, and so on.
     *
     * @param ctx the collective
     * @param blocks the blocks; all but {@code owned} are overwritten
     * @param owned the block this rank holds at the start
     * @param indexBase the first message index to use
     */
    public static void allGather(
            CollectiveContext ctx, ByteBuffer[] blocks, int owned, int indexBase) {
        int p = ctx.size();
        int r = ctx.rank();
        int right = (r + 1) % p;
        int left = (r + p - 1) % p;
        for (int s = 0; s < p - 1; s++) {
            int sb = Math.floorMod(owned - s, p);
            int rb = Math.floorMod(owned - s - 1, p);
            Transfer recv = ctx.recv(left, indexBase + s, blocks[rb].duplicate().clear());
            Transfer send = ctx.send(right, indexBase + s, blocks[sb].duplicate().clear());
            ctx.await(recv, send);
        }
    }

    /**
     * Splits {@code count} elements into {@code parts} balanced blocks.
     *
     * @param count the number of elements
     * @param parts the number of blocks
     * @return each block's element count; earlier blocks get no fewer than later ones' minus one
     */
    public static int[] balancedCounts(int count, int parts) {
        int[] counts = new int[parts];
        for (int b = 0; b < parts; b++) {
            counts[b] = (int) ((long) (b + 1) * count / parts - (long) b * count / parts);
        }
        return counts;
    }

    private static int segments(int count, int segElems) {
        return Math.max(1, (count + segElems - 1) / segElems);
    }

    private static int segmentLength(int count, int segElems, int g) {
        return Math.max(0, Math.min(segElems, count - g * segElems));
    }

    private static int max(int[] values) {
        int m = 0;
        for (int v : values) {
            m = Math.max(m, v);
        }
        return m;
    }
}
