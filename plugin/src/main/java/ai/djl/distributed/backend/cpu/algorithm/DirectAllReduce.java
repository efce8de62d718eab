package ai.djl.distributed.backend.cpu.algorithm;

import ai.djl.distributed.backend.cpu.transport.PeerMemory;
import ai.djl.distributed.backend.cpu.transport.Transfer;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * All-reduce by reading the peers' buffers directly ({@link PeerMemory}), for ranks on one host: a
 * reduce-scatter in which each rank reads its block from every peer and reduces it into its own
 * copy, then an all-gather in which each rank reads every other block from its owner straight into
 * place. Every byte is copied once, where the ring copies it into a channel and out again, and no
 * thread but the caller's moves data.
 *
 * <p>Small messages over the transport say when a buffer may be read: each rank sends its buffer's
 * address, then "reduced" once its block is final (it has also finished reading the peers' copies
 * of that block, so they may overwrite them), then "done" once it has read everything it needs. A
 * rank returns only when every peer is done with its buffer, so the caller may change it then. Each
 * block is reduced by its owner alone, so every rank ends with the same bits.
 */
public final class DirectAllReduce {

    /** Piece of a peer's block read and reduced at a time: it and its accumulator fit in L2. */
    static final int CHUNK_BYTES = 1024 * 1024;

    private static final int ADDRESS = 0;
    private static final int DONE = 1;

    private DirectAllReduce() {}

    /**
     * Reduces {@code data} across ranks in place.
     *
     * @param ctx the collective; its transport must offer {@link PeerMemory}
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
        int r = ctx.rank();
        int es = ctx.elementSize();
        int[] counts = Ring.balancedCounts(count, p);
        int[] offsets = new int[p];
        for (int b = 1; b < p; b++) {
            offsets[b] = offsets[b - 1] + counts[b - 1] * es;
        }

        long[] addresses = exchangeAddresses(ctx, PeerMemory.address(data));

        ByteBuffer bounce = ctx.scratch(0, Math.min(CHUNK_BYTES, counts[r] * es));
        int chunkElems = Math.max(1, CHUNK_BYTES / es);
        for (int e = 0; e < counts[r]; e += chunkElems) {
            int n = Math.min(chunkElems, counts[r] - e);
            int at = offsets[r] + e * es;
            for (int k = 1; k < p; k++) {
                int peer = (r + k) % p;
                memory.read(peer, addresses[peer] + at, bounce.clear().limit(n * es));
                ctx.reduce(data, at, bounce, 0, n);
            }
            ByteBuffer reduced = CollectiveContext.slice(data, at, n * es);
            for (int k = 1; k < p; k++) {
                int peer = (r + k) % p;
                memory.write(peer, addresses[peer] + at, reduced);
            }
        }

        // Our buffer is the peers' until each has written its block into it.
        ByteBuffer flag = ByteBuffer.allocate(1);
        Transfer[] told = notifyAll(ctx, DONE);
        for (int k = 1; k < p; k++) {
            ctx.await(ctx.recv((r + k) % p, DONE, flag.clear()));
        }
        ctx.await(told);
    }

    /** Sends this rank's buffer address to every peer; returns every rank's. */
    private static long[] exchangeAddresses(CollectiveContext ctx, long mine) {
        int p = ctx.size();
        int r = ctx.rank();
        ByteBuffer out = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
        out.putLong(0, mine);
        ByteBuffer[] in = new ByteBuffer[p];
        Transfer[] transfers = new Transfer[2 * (p - 1)];
        for (int k = 1; k < p; k++) {
            int peer = (r + k) % p;
            in[peer] = ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN);
            transfers[2 * k - 2] = ctx.recv(peer, ADDRESS, in[peer]);
            transfers[2 * k - 1] = ctx.send(peer, ADDRESS, out);
        }
        ctx.await(transfers);
        long[] addresses = new long[p];
        for (int k = 1; k < p; k++) {
            int peer = (r + k) % p;
            addresses[peer] = in[peer].getLong(0);
        }
        addresses[r] = mine;
        return addresses;
    }

    private static Transfer[] notifyAll(CollectiveContext ctx, int index) {
        int p = ctx.size();
        ByteBuffer flag = ByteBuffer.allocate(1);
        Transfer[] sends = new Transfer[p - 1];
        for (int k = 1; k < p; k++) {
            sends[k - 1] = ctx.send((ctx.rank() + k) % p, index, flag.duplicate());
        }
        return sends;
    }
}
