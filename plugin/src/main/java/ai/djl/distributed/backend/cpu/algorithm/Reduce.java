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

import java.nio.ByteBuffer;

/**
 * Reduce to one root over a binomial tree: in round k, ranks whose k-th bit is set send their
 * partial result to the rank without it and drop out. Only the root's buffer is written; the others
 * accumulate in scratch space.
 */
public final class Reduce {

    private Reduce() {}

    /**
     * Reduces every rank's {@code data} into the root's.
     *
     * @param ctx the collective
     * @param data the elements: the result on the root, unchanged elsewhere
     * @param count the number of elements
     * @param root the root rank
     */
    public static void run(CollectiveContext ctx, ByteBuffer data, int count, int root) {
        int p = ctx.size();
        int vr = Math.floorMod(ctx.rank() - root, p);
        int bytes = data.remaining();
        ByteBuffer acc = data;
        if (vr != 0) {
            acc = ctx.scratch(1, bytes);
            acc.put(0, data, 0, bytes);
        }
        for (int mask = 1; mask < p; mask <<= 1) {
            if ((vr & mask) != 0) {
                ctx.await(ctx.send((vr - mask + root) % p, 0, acc));
                return;
            }
            if (vr + mask < p) {
                ctx.await(ctx.recvReduce((vr + mask + root) % p, 0, acc));
            }
        }
    }
}
