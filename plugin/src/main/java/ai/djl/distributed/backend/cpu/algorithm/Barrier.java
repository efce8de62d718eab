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
 * The dissemination barrier: in round k every rank signals rank + 2^k and waits for rank - 2^k;
 * after ceil(lg P) rounds every rank has heard, directly or not, from every other. Ranks of one
 * host post an empty message on the shared-memory board instead and wait for everyone's.
 */
public final class Barrier {

    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private Barrier() {}

    /**
     * Returns once every rank of the group has entered the barrier.
     *
     * @param ctx the collective
     */
    public static void run(CollectiveContext ctx) {
        if (ctx.hasBoard()) {
            ctx.exchangeOnBoard(EMPTY);
            return;
        }
        int p = ctx.size();
        int r = ctx.rank();
        int round = 0;
        for (int d = 1; d < p; d <<= 1, round++) {
            ctx.await(
                    ctx.recv(Math.floorMod(r - d, p), round, EMPTY),
                    ctx.send((r + d) % p, round, EMPTY));
        }
    }
}
