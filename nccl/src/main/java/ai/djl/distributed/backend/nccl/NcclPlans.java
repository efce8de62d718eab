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
package ai.djl.distributed.backend.nccl;

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.backend.PeerTransfer;
import ai.djl.distributed.backend.nccl.NcclCall.AllGather;
import ai.djl.distributed.backend.nccl.NcclCall.AllReduce;
import ai.djl.distributed.backend.nccl.NcclCall.Broadcast;
import ai.djl.distributed.backend.nccl.NcclCall.Recv;
import ai.djl.distributed.backend.nccl.NcclCall.Reduce;
import ai.djl.distributed.backend.nccl.NcclCall.ReduceScatter;
import ai.djl.distributed.backend.nccl.NcclCall.Send;
import ai.djl.distributed.backend.nccl.NcclOps.Reduction;

import java.util.ArrayList;
import java.util.List;

/**
 * Plans each collective of the process-group API as NCCL calls, the way PyTorch's {@code
 * ProcessGroupNCCL} does: one native collective where the arrays allow it; grouped broadcasts for
 * an all-gather into separate arrays and grouped reduces for a reduce-scatter from separate arrays
 * (PyTorch's uneven forms), since neither needs a staging buffer; grouped sends and receives, to
 * this rank as well, for all-to-all, gather and scatter (NCCL has native forms of these only from
 * 2.28).
 *
 * <p>The arrays have been checked by the process group (shapes, counts, types consistent) and by
 * {@link DevicePointers#check} (device, contiguity, an NCCL type). Stateless and thread-safe.
 */
final class NcclPlans {

    private final int rank;
    private final int size;

    /**
     * Creates the planner of one rank.
     *
     * @param rank this rank in the group
     * @param size the group's size
     */
    NcclPlans(int rank, int size) {
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException(
                    "rank: " + rank + " of size " + size + " (expected: 0 <= rank < size)");
        }
        this.rank = rank;
        this.size = size;
    }

    List<NcclCall> broadcast(TensorView array, int root) {
        return List.of(
                new Broadcast(array.address(), array.address(), array.numel(), type(array), root));
    }

    List<NcclCall> allReduce(List<TensorView> arrays, ReduceOp op) {
        List<NcclCall> calls = new ArrayList<>(arrays.size());
        for (TensorView a : arrays) {
            calls.add(
                    new AllReduce(a.address(), a.address(), a.numel(), type(a), reduction(op, a)));
        }
        return calls;
    }

    List<NcclCall> reduce(TensorView array, int root, ReduceOp op) {
        return List.of(
                new Reduce(
                        array.address(),
                        array.address(),
                        array.numel(),
                        type(array),
                        reduction(op, array),
                        root));
    }

    List<NcclCall> allGatherIntoTensor(TensorView output, TensorView input) {
        return List.of(
                new AllGather(input.address(), output.address(), input.numel(), type(input)));
    }

    List<NcclCall> allGather(List<TensorView> outputs, TensorView input) {
        if (consecutive(outputs, input.numel() * type(input).width())) {
            return allGatherIntoTensor(outputs.get(0), input);
        }
        // One broadcast per root: no staging buffer, and the root's own block is a copy.
        List<NcclCall> calls = new ArrayList<>(size);
        for (int j = 0; j < size; j++) {
            calls.add(
                    new Broadcast(
                            input.address(),
                            outputs.get(j).address(),
                            input.numel(),
                            type(input),
                            j));
        }
        return calls;
    }

    List<NcclCall> reduceScatterTensor(TensorView output, TensorView input, ReduceOp op) {
        return List.of(
                new ReduceScatter(
                        input.address(),
                        output.address(),
                        output.numel(),
                        type(output),
                        reduction(op, output)));
    }

    List<NcclCall> reduceScatter(TensorView output, List<TensorView> inputs, ReduceOp op) {
        if (consecutive(inputs, output.numel() * type(output).width())) {
            return reduceScatterTensor(output, inputs.get(0), op);
        }
        // One reduce per root; the output is written on its root only (NCCL ignores recvbuff
        // elsewhere), so every rank may name its own output.
        Reduction r = reduction(op, output);
        List<NcclCall> calls = new ArrayList<>(size);
        for (int j = 0; j < size; j++) {
            calls.add(
                    new Reduce(
                            inputs.get(j).address(),
                            output.address(),
                            output.numel(),
                            type(output),
                            r,
                            j));
        }
        return calls;
    }

    List<NcclCall> gather(List<TensorView> outputs, TensorView input, int root) {
        List<NcclCall> calls = new ArrayList<>(rank == root ? size + 1 : 1);
        calls.add(new Send(input.address(), input.numel(), type(input), root));
        if (rank == root) {
            for (int j = 0; j < size; j++) {
                TensorView out = outputs.get(j);
                calls.add(new Recv(out.address(), out.numel(), type(out), j));
            }
        }
        return calls;
    }

    List<NcclCall> scatter(TensorView output, List<TensorView> inputs, int root) {
        List<NcclCall> calls = new ArrayList<>(rank == root ? size + 1 : 1);
        if (rank == root) {
            for (int j = 0; j < size; j++) {
                TensorView in = inputs.get(j);
                calls.add(new Send(in.address(), in.numel(), type(in), j));
            }
        }
        calls.add(new Recv(output.address(), output.numel(), type(output), root));
        return calls;
    }

    List<NcclCall> allToAll(List<TensorView> outputs, List<TensorView> inputs) {
        List<NcclCall> calls = new ArrayList<>(2 * size);
        for (int j = 0; j < size; j++) {
            TensorView in = inputs.get(j);
            TensorView out = outputs.get(j);
            calls.add(new Send(in.address(), in.numel(), type(in), j));
            calls.add(new Recv(out.address(), out.numel(), type(out), j));
        }
        return calls;
    }

    List<NcclCall> allToAllSingle(
            TensorView output, TensorView input, long[] outputSplits, long[] inputSplits) {
        NcclDataType t = type(input);
        long inRow = rowElements(input);
        long outRow = rowElements(output);
        List<NcclCall> calls = new ArrayList<>(2 * size);
        long sent = 0;
        long received = 0;
        for (int j = 0; j < size; j++) {
            long in = inputSplits[j] * inRow;
            long out = outputSplits[j] * outRow;
            // Both sides skip an empty block alike: the splits agree across ranks.
            if (in > 0) {
                calls.add(new Send(input.address() + sent * t.width(), in, t, j));
            }
            if (out > 0) {
                calls.add(new Recv(output.address() + received * t.width(), out, t, j));
            }
            sent += in;
            received += out;
        }
        return calls;
    }

    /**
     * A barrier as PyTorch's: a one-element sum over a scratch buffer on the device.
     *
     * @param scratch the address of one float32 on the communicator's device
     * @return the plan
     */
    List<NcclCall> barrier(long scratch) {
        return List.of(
                new AllReduce(
                        scratch,
                        scratch,
                        1,
                        NcclDataType.FLOAT32,
                        new Reduction(NcclRedOp.SUM, NcclDataType.FLOAT32, null)));
    }

    List<NcclCall> send(TensorView array, int dst) {
        return List.of(new Send(array.address(), array.numel(), type(array), dst));
    }

    List<NcclCall> recv(TensorView array, int src) {
        return List.of(new Recv(array.address(), array.numel(), type(array), src));
    }

    /**
     * A batch of sends and receives, as one group.
     *
     * @param arrays the transfers' arrays, in order
     * @param transfers the transfers (their peers and directions)
     * @return the plan
     */
    List<NcclCall> sendRecv(List<TensorView> arrays, List<PeerTransfer> transfers) {
        List<NcclCall> calls = new ArrayList<>(transfers.size());
        for (int i = 0; i < transfers.size(); i++) {
            TensorView a = arrays.get(i);
            PeerTransfer t = transfers.get(i);
            calls.add(
                    t.send()
                            ? new Send(a.address(), a.numel(), type(a), t.peer())
                            : new Recv(a.address(), a.numel(), type(a), t.peer()));
        }
        return calls;
    }

    /** Whether the arrays lie one after another, {@code bytes} apart, in rank order. */
    private boolean consecutive(List<TensorView> arrays, long bytes) {
        long base = arrays.get(0).address();
        for (int j = 1; j < arrays.size(); j++) {
            if (arrays.get(j).address() != base + j * bytes) {
                return false;
            }
        }
        return true;
    }

    /** The elements of one row; a scalar is one row of one element, as the CPU backend has it. */
    private static long rowElements(TensorView v) {
        long[] shape = v.shape();
        if (shape.length == 0) {
            return 1;
        }
        if (shape[0] == 0) {
            return 0;
        }
        return v.numel() / shape[0];
    }

    private static NcclDataType type(TensorView v) {
        return NcclOps.dataType(v.dataType());
    }

    private static Reduction reduction(ReduceOp op, TensorView v) {
        return NcclOps.reduction(op, v.dataType());
    }
}
