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
