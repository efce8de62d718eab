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
package ai.djl.distributed.backend.cpu;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.FutureWork;
import ai.djl.distributed.backend.cpu.transport.OpSignature;
import ai.djl.distributed.backend.cpu.transport.Transfer;
import ai.djl.distributed.backend.cpu.transport.Transport;
import ai.djl.distributed.memory.NdRegion;
import ai.djl.ndarray.NDArray;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ForkJoinPool;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Sends and receives with tags. The n-th send from rank a to rank b with tag t matches the n-th
 * receive on b from a with tag t, whatever the order of other tags, as in MPI; each message is
 * posted to the transport when issued, outside the collectives' queue. A transfer still pending
 * after the group's timeout fails the group, as a collective's does.
 *
 * <p>The counts of messages per (peer, tag), which number each message, live as long as the group:
 * one entry per distinct pair and direction. They are not bounded: a count may go only once both
 * ranks know that no later message uses its tag, which only the caller knows, and a count dropped
 * on one side alone (an LRU, say) would number that side's next message with the tag from zero
 * again while the other side counts on, and the two would never pair. Callers reuse tags (as
 * PyTorch code does); {@link CpuBackend#send} says so.
 */
final class PointToPoint {

    private final Transport transport;
    private final Duration timeout;
    // Messages so far per (peer << 32 | tag), each direction; guarded by this.
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
        String what = "send to rank " + dst + " of " + sig;
        return new FutureWork(
                what,
                bounded(t, what, dst),
                timeout.plus(CollectiveRunner.WAIT_SLACK),
                CollectiveRunner.abortOnInterrupt(transport, what));
    }

    Work recv(NdRegion region, NDArray array, int src, int tag) {
        OpSignature sig = signature(array, tag);
        long slot = Transport.p2pSlot(tag, next(received, src, tag));
        Transfer t = transport.recv(src, slot, sig, region.buffer());
        String what = "recv from rank " + src + " of " + sig;
        return new FutureWork(
                what,
                bounded(t, what, src).thenRun(region::writeBack),
                timeout.plus(CollectiveRunner.WAIT_SLACK),
                CollectiveRunner.abortOnInterrupt(transport, what));
    }

    /**
     * Returns the transfer's future, failing the group when the transfer outlives the group's
     * timeout, as a collective does: a posted transfer keeps the caller's memory, and only an abort
     * guarantees that nothing reads or writes it once its caller has given up.
     */
    private CompletableFuture<Void> bounded(Transfer t, String what, int peer) {
        CompletableFuture<Void> f = t.future();
        f.copy()
                .orTimeout(timeout.toNanos(), TimeUnit.NANOSECONDS)
                .whenComplete(
                        (v, e) -> {
                            if (e instanceof TimeoutException) {
                                // Not on the JDK's one timer thread, which every orTimeout in
                                // the JVM shares: the abort runs the failed transfers' callbacks.
                                ForkJoinPool.commonPool().execute(() -> timedOut(what, peer));
                            }
                        });
        return f;
    }

    private void timedOut(String what, int peer) {
        transport.abort(
                new CommunicationException(
                        what
                                + " did not complete within "
                                + timeout
                                + " (did rank "
                                + peer
                                + " die, stall, or not post the matching operation?); the group"
                                + " is aborted",
                        peer));
    }

    private static OpSignature signature(NDArray array, int tag) {
        return new OpSignature(
                OpSignature.SEND, array.getDataType().ordinal(), 0, tag, array.size());
    }

    private synchronized int next(Map<Long, Integer> counters, int peer, int tag) {
        return counters.merge(((long) peer << 32) | tag, 1, Integer::sum) - 1;
    }
}
