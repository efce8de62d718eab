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

import ai.djl.distributed.backend.cpu.transport.Transfer;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * The collectives where each pair of ranks exchanges at most one message of its own: gather and
 * scatter (the root talks to every rank directly) and all-to-all (every rank talks to every rank).
 * All sends and receives are posted at once; the transport moves them in parallel.
 */
public final class Exchange {

    private Exchange() {}

    /**
     * Gathers every rank's {@code input} into the root's {@code outputs}.
     *
     * @param ctx the collective
     * @param input this rank's bytes
     * @param outputs on the root, one buffer per rank (the root's own is filled by copy); ignored
     *     elsewhere
     * @param root the root rank
     */
    public static void gather(
            CollectiveContext ctx, ByteBuffer input, ByteBuffer[] outputs, int root) {
        if (ctx.rank() != root) {
            ctx.await(ctx.send(root, 0, input));
            return;
        }
        List<Transfer> recvs = new ArrayList<>();
        for (int peer = 0; peer < ctx.size(); peer++) {
            if (peer != root) {
                recvs.add(ctx.recv(peer, 0, outputs[peer]));
            }
        }
        outputs[root].duplicate().put(input.duplicate());
        ctx.await(recvs.toArray(new Transfer[0]));
    }

    /**
     * Scatters the root's {@code inputs} (one per rank) into every rank's {@code output}.
     *
     * @param ctx the collective
     * @param inputs on the root, one buffer per rank; ignored elsewhere
     * @param output this rank's destination
     * @param root the root rank
     */
    public static void scatter(
            CollectiveContext ctx, ByteBuffer[] inputs, ByteBuffer output, int root) {
        if (ctx.rank() != root) {
            ctx.await(ctx.recv(root, 0, output));
            return;
        }
        List<Transfer> sends = new ArrayList<>();
        for (int peer = 0; peer < ctx.size(); peer++) {
            if (peer != root) {
                sends.add(ctx.send(peer, 0, inputs[peer]));
            }
        }
        output.duplicate().put(inputs[root].duplicate());
        ctx.await(sends.toArray(new Transfer[0]));
    }

    /**
     * Sends {@code inputs[j]} to rank j and receives rank j's message into {@code outputs[j]}, for
     * every j; this rank's own pair is copied. Message sizes may differ per pair; each must match
     * its receiver's buffer.
     *
     * @param ctx the collective
     * @param inputs one buffer per rank
     * @param outputs one buffer per rank
     */
    public static void allToAll(CollectiveContext ctx, ByteBuffer[] inputs, ByteBuffer[] outputs) {
        int p = ctx.size();
        int r = ctx.rank();
        List<Transfer> transfers = new ArrayList<>();
        // Pairwise order: step s talks to rank + s and rank - s, spreading the load.
        for (int s = 1; s < p; s++) {
            int from = Math.floorMod(r - s, p);
            transfers.add(ctx.recv(from, 0, outputs[from]));
        }
        for (int s = 1; s < p; s++) {
            int to = (r + s) % p;
            transfers.add(ctx.send(to, 0, inputs[to]));
        }
        outputs[r].duplicate().put(inputs[r].duplicate());
        ctx.await(transfers.toArray(new Transfer[0]));
    }
}
