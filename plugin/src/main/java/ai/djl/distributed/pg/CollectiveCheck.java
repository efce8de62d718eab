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
package ai.djl.distributed.pg;

import ai.djl.Device;
import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.store.Store;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The mismatch check of every backend, as PyTorch's {@code TORCH_DISTRIBUTED_DEBUG=DETAIL} wraps a
 * process group: before each collective, every rank's {@link Fingerprint} is gathered through a
 * helper CPU group (over TCP, on the group's store under {@code debug/}) and compared; ranks that
 * called different collectives, types, sizes, reductions or roots all fail before anything runs,
 * each naming what it and the first differing rank called. Backends that check in band (the CPU
 * backend compares every message's signature) lose nothing by it; others (NCCL) would hang or
 * corrupt without it. It costs one small all-gather and a round trip per collective.
 *
 * <p>Thread-safe: checks run one at a time, in the order collectives are issued (which must be the
 * same on every rank anyway). Blocks up to the group's timeout for a rank that never arrives.
 */
final class CollectiveCheck implements AutoCloseable {

    private final Backend helper;
    private final int rank;
    private final int size;
    private final NDManager manager = NDManager.newBaseManager(Device.cpu());
    private long seq;

    private CollectiveCheck(Backend helper, int rank, int size) {
        this.helper = helper;
        this.rank = rank;
        this.size = size;
    }

    /**
     * Creates the check's helper group; blocks until every rank has joined it.
     *
     * @param store the group's store, namespaced for the check
     * @param rank this rank in the group
     * @param size the group's size
     * @param timeout the group's timeout
     * @return the check
     */
    static CollectiveCheck create(Store store, int rank, int size, Duration timeout) {
        Backend helper =
                ProcessGroups.provider("cpu")
                        .create(
                                new BackendContext(
                                        store,
                                        rank,
                                        size,
                                        Device.Type.CPU,
                                        timeout,
                                        Map.of("transport", "tcp")));
        return new CollectiveCheck(helper, rank, size);
    }

    /**
     * Compares this rank's call with every other rank's; blocks until all have called.
     *
     * @param kind the collective
     * @param op its reduction, or null
     * @param root its root rank, or -1
     * @param type its element type, or null
     * @param arrays the arrays whose shapes every rank must agree on
     * @throws CommunicationException naming this rank's call and the first differing rank's
     */
    synchronized void verify(
            Collective kind, ReduceOp op, int root, DataType type, List<NDArray> arrays) {
        Fingerprint call = Fingerprint.of(seq++, kind, op, root, type, arrays);
        long[] mine = call.toLongs();
        long[] all;
        try (NDManager m = manager.newSubManager()) {
            NDArray in = m.create(mine);
            NDArray out = m.zeros(new Shape((long) size * Fingerprint.LONGS), DataType.INT64);
            helper.allGatherIntoTensor(out, in).waitFor();
            all = out.toLongArray();
        }
        for (int r = 0; r < size; r++) {
            Fingerprint theirs = Fingerprint.fromLongs(all, r * Fingerprint.LONGS);
            if (r != rank && !call.matches(theirs)) {
                throw new CommunicationException(
                        "collectives differ across ranks (TORCH_DISTRIBUTED_DEBUG=DETAIL): rank "
                                + rank
                                + " called "
                                + call
                                + ", rank "
                                + r
                                + " called "
                                + theirs
                                + " (differing: "
                                + (theirs == null ? "everything" : call.differences(theirs))
                                + ")",
                        r);
            }
        }
    }

    /** Closes the helper group. */
    @Override
    public void close() {
        try {
            helper.close();
        } finally {
            manager.close();
        }
    }
}
