package ai.djl.distributed.backend.cpu;

import ai.djl.distributed.backend.cpu.transport.OpSignature;
import ai.djl.distributed.backend.cpu.transport.Transfer;
import ai.djl.distributed.backend.cpu.transport.Transport;
import ai.djl.distributed.pg.FutureWork;
import ai.djl.distributed.pg.Work;
import ai.djl.ndarray.NDArray;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * Sends and receives with tags. The n-th send from rank a to rank b with tag t matches the n-th
 * receive on b from a with tag t, whatever the order of other tags, as in MPI; each message is
 * posted to the transport when issued, outside the collectives' queue.
 */
final class PointToPoint {

    private final Transport transport;
    private final Duration timeout;
    private final Map<Long, Integer> sent = new HashMap<>();
    private final Map<Long, Integer> received = new HashMap<>();

    PointToPoint(Transport transport, Duration timeout) {
        this.transport = transport;
        this.timeout = timeout;
    }

    Work send(NdRegion region, NDArray array, int dst, int tag) {
        OpSignature sig = signature(array, tag);
        long slot = Transport.p2pSlot(tag, next(sent, dst, tag));
        Transfer t = transport.send(dst, slot, sig, region.buffer());
        return new FutureWork("send to rank " + dst + " of " + sig, t.future(), timeout);
    }

    Work recv(NdRegion region, NDArray array, int src, int tag) {
        OpSignature sig = signature(array, tag);
        long slot = Transport.p2pSlot(tag, next(received, src, tag));
        Transfer t = transport.recv(src, slot, sig, region.buffer());
        return new FutureWork(
                "recv from rank " + src + " of " + sig,
                t.future().thenRun(region::writeBack),
                timeout);
    }

    private static OpSignature signature(NDArray array, int tag) {
        return new OpSignature(
                OpSignature.SEND, array.getDataType().ordinal(), 0, tag, array.size());
    }

    private synchronized int next(Map<Long, Integer> counters, int peer, int tag) {
        return counters.merge(((long) peer << 32) | tag, 1, Integer::sum) - 1;
    }
}
