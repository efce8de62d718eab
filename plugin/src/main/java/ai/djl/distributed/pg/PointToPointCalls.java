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

import ai.djl.distributed.Work;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.PeerTransfer;
import ai.djl.ndarray.NDArray;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The point-to-point operations of one {@link ProcessGroup}, behind its public methods: sends,
 * receives and batches of them, checked at the group's edge ({@link Checks}) and run on the backend
 * of the array's device type. They take no part in the order of collectives and skip the mismatch
 * check: sends and receives pair up by peer and tag. Thread-safe, as the group.
 */
final class PointToPointCalls {

    private final ProcessGroup group;
    private final GroupContext context;
    private final int rank;
    private final int size;
    private final DeviceBackends backends;

    PointToPointCalls(ProcessGroup group, GroupContext context, DeviceBackends backends) {
        this.group = group;
        this.context = context;
        this.rank = group.getRank();
        this.size = group.getSize();
        this.backends = backends;
    }

    /** Checks the arguments of {@link ProcessGroup#isend}, then starts it. */
    Work isend(NDArray array, int dst, int tag) {
        Checks.array("array", array);
        Checks.peer("dst", dst, rank, size);
        Checks.tag(tag);
        return pointToPoint(array, b -> b.send(array, dst, tag));
    }

    /** Checks the arguments of {@link ProcessGroup#irecv}, then starts it. */
    Work irecv(NDArray array, int src, int tag) {
        Checks.array("array", array);
        Checks.peer("src", src, rank, size);
        Checks.tag(tag);
        return pointToPoint(array, b -> b.recv(array, src, tag));
    }

    /** Checks the arguments of {@link ProcessGroup#batchIsendIrecv}, then starts it. */
    List<Work> batchIsendIrecv(List<P2POp> ops) {
        // Every operation is checked before any is posted: a bad one must not leave the others
        // half sent, with no Work to show for them.
        if (ops == null) {
            throw new IllegalArgumentException("ops: null (expected: a list of P2POp)");
        }
        for (int i = 0; i < ops.size(); i++) {
            P2POp op = ops.get(i);
            if (op == null) {
                throw new IllegalArgumentException(
                        "ops[" + i + "]: null (expected: a P2POp.isend or P2POp.irecv)");
            }
            Checks.array("ops[" + i + "] array", op.getArray());
            Checks.peer(
                    op.isSend() ? "ops[" + i + "] dst" : "ops[" + i + "] src",
                    op.getPeer(),
                    rank,
                    size);
            Checks.tag(op.getTag());
        }
        if (ops.isEmpty()) {
            return new ArrayList<>();
        }
        context.checkOpen(group);
        List<NDArray> arrays = new ArrayList<>(ops.size());
        List<PeerTransfer> transfers = new ArrayList<>(ops.size());
        for (P2POp op : ops) {
            arrays.add(op.getArray());
            transfers.add(new PeerTransfer(op.isSend(), op.getArray(), op.getPeer(), op.getTag()));
        }
        // One backend for the whole batch: it may have to post the transfers as one operation.
        return backends.forArrays(arrays, "batchIsendIrecv").sendRecvBatch(transfers);
    }

    private Work pointToPoint(NDArray array, Function<Backend, Work> call) {
        context.checkOpen(group);
        return call.apply(backends.forArrays(List.of(array)));
    }
}
