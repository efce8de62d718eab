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

import ai.djl.distributed.backend.cpu.transport.ShmBoard;
import ai.djl.distributed.backend.cpu.transport.Transfer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Broadcast over a binomial tree rooted at the root: lg P rounds, each rank receiving once (into
 * its own buffer, no copies) and forwarding to its children. Small messages between ranks of one
 * host go through the shared-memory board instead: the root posts, the others read.
 */
public final class Broadcast {

    private Broadcast() {}

    /**
     * Copies the root's {@code data} into every rank's {@code data}.
     *
     * @param ctx the collective
     * @param data the bytes: read on the root, overwritten elsewhere
     * @param root the root rank
     */
    public static void run(CollectiveContext ctx, ByteBuffer data, int root) {
        if (data.remaining() <= ShmBoard.SLOT_BYTES && ctx.hasBoard()) {
            boolean isRoot = ctx.rank() == root;
            ByteBuffer[] all = ctx.exchangeOnBoard(isRoot ? data : data.duplicate().limit(0));
            if (!isRoot) {
                data.put(data.position(), all[root], 0, data.remaining());
            }
            return;
        }
        int p = ctx.size();
        int vr = Math.floorMod(ctx.rank() - root, p);
        int mask = 1;
        // 1. Receive from the parent: the rank that differs in our lowest set bit.
        while (mask < p) {
            if ((vr & mask) != 0) {
                ctx.await(ctx.recv((vr - mask + root) % p, 0, data));
                break;
            }
            mask <<= 1;
        }
        // 2. Forward to the children, the farthest first.
        List<Transfer> sends = new ArrayList<>();
        for (mask >>= 1; mask > 0; mask >>= 1) {
            if (vr + mask < p) {
                sends.add(ctx.send((vr + mask + root) % p, 0, data));
            }
        }
        ctx.await(sends.toArray(new Transfer[0]));
    }
}
