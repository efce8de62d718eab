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

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.Backend;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The collectives of one {@link ProcessGroup}, behind its public methods: each checks its arguments
 * at the group's edge ({@link Checks}), then runs on the backend of its arrays' device type, after
 * the mismatch check (debug level DETAIL) has compared it across ranks. Point-to-point operations
 * are in {@link PointToPointCalls}. Thread-safe, as the group.
 */
final class CollectiveCalls {

    private final ProcessGroup group;
    private final GroupContext context;
    private final int rank;
    private final int size;
    private final DeviceBackends backends;
    private final CollectiveCheck check; // null unless the debug level is DETAIL

    CollectiveCalls(
            ProcessGroup group,
            GroupContext context,
            DeviceBackends backends,
            CollectiveCheck check) {
        this.group = group;
        this.context = context;
        this.rank = group.getRank();
        this.size = group.getSize();
        this.backends = backends;
        this.check = check;
    }

    /** Checks the arguments of {@link ProcessGroup#broadcastAsync}, then starts it. */
    Work broadcast(NDArray array, int src) {
        Checks.array("array", array);
        Checks.rank("src", src, size);
        List<NDArray> a = List.of(array);
        return run(Collective.BROADCAST, null, src, a, a, b -> b.broadcast(array, src));
    }

    /** Checks the arguments of {@link ProcessGroup#allReduceCoalescedAsync}, then starts it. */
    Work allReduceCoalesced(List<NDArray> arrays, ReduceOp op) {
        Checks.sameType("arrays", arrays);
        Checks.reduceOp(op, arrays.get(0).getDataType());
        List<NDArray> a = List.copyOf(arrays);
        return run(Collective.ALL_REDUCE, op, -1, a, a, b -> b.allReduce(a, op));
    }

    /** Checks the arguments of {@link ProcessGroup#reduceAsync}, then starts it. */
    Work reduce(NDArray array, int dst, ReduceOp op) {
        Checks.array("array", array);
        Checks.rank("dst", dst, size);
        Checks.reduceOp(op, array.getDataType());
        List<NDArray> a = List.of(array);
        return run(Collective.REDUCE, op, dst, a, a, b -> b.reduce(array, dst, op));
    }

    /** Checks the arguments of {@link ProcessGroup#allGatherAsync}, then starts it. */
    Work allGather(List<NDArray> outputs, NDArray input) {
        Checks.array("input", input);
        Checks.list("outputs", outputs, size, input.getDataType(), input.getShape());
        List<NDArray> o = List.copyOf(outputs);
        return run(
                Collective.ALL_GATHER,
                null,
                -1,
                with(input, o),
                List.of(input),
                b -> b.allGather(o, input));
    }

    /** Checks the arguments of {@link ProcessGroup#allGatherIntoTensorAsync}, then starts it. */
    Work allGatherIntoTensor(NDArray output, NDArray input) {
        Checks.array("input", input);
        Checks.array("output", output);
        Checks.like("output", output, input.getDataType(), output.getShape());
        Checks.elements("output", output, input.size() * size);
        return run(
                Collective.ALL_GATHER_INTO_TENSOR,
                null,
                -1,
                List.of(output, input),
                List.of(output, input),
                b -> b.allGatherIntoTensor(output, input));
    }

    /** Checks the arguments of {@link ProcessGroup#gatherAsync}, then starts it. */
    Work gather(NDArray input, List<NDArray> outputs, int dst) {
        Checks.array("input", input);
        Checks.rank("dst", dst, size);
        List<NDArray> o = rootList("outputs", outputs, dst, input);
        return run(
                Collective.GATHER,
                null,
                dst,
                with(input, o),
                List.of(input),
                b -> b.gather(o, input, dst));
    }

    /** Checks the arguments of {@link ProcessGroup#scatterAsync}, then starts it. */
    Work scatter(NDArray output, List<NDArray> inputs, int src) {
        Checks.array("output", output);
        Checks.rank("src", src, size);
        List<NDArray> i = rootList("inputs", inputs, src, output);
        return run(
                Collective.SCATTER,
                null,
                src,
                with(output, i),
                List.of(output),
                b -> b.scatter(output, i, src));
    }

    /** Checks the arguments of {@link ProcessGroup#reduceScatterAsync}, then starts it. */
    Work reduceScatter(NDArray output, List<NDArray> inputs, ReduceOp op) {
        Checks.array("output", output);
        Checks.list("inputs", inputs, size, output.getDataType(), output.getShape());
        Checks.reduceOp(op, output.getDataType());
        List<NDArray> i = List.copyOf(inputs);
        return run(
                Collective.REDUCE_SCATTER,
                op,
                -1,
                with(output, i),
                with(output, i),
                b -> b.reduceScatter(output, i, op));
    }

    /** Checks the arguments of {@link ProcessGroup#reduceScatterTensorAsync}, then starts it. */
    Work reduceScatterTensor(NDArray output, NDArray input, ReduceOp op) {
        Checks.array("output", output);
        Checks.array("input", input);
        Checks.like("input", input, output.getDataType(), input.getShape());
        Checks.elements("input", input, output.size() * size);
        Checks.reduceOp(op, output.getDataType());
        return run(
                Collective.REDUCE_SCATTER_TENSOR,
                op,
                -1,
                List.of(output, input),
                List.of(output, input),
                b -> b.reduceScatterTensor(output, input, op));
    }

    /** Checks the arguments of {@link ProcessGroup#allToAllAsync}, then starts it. */
    Work allToAll(List<NDArray> outputs, List<NDArray> inputs) {
        Checks.sameType("inputs", inputs);
        Checks.sameType("outputs", outputs);
        if (inputs.size() != size || outputs.size() != size) {
            throw new IllegalArgumentException(
                    "inputs, outputs: "
                            + inputs.size()
                            + ", "
                            + outputs.size()
                            + " arrays (expected: "
                            + size
                            + " each, one per rank)");
        }
        Checks.like(
                "outputs[0]",
                outputs.get(0),
                inputs.get(0).getDataType(),
                outputs.get(0).getShape());
        // This rank's own block never crosses the wire, so no peer could catch a mismatch there.
        Checks.elements("outputs[" + rank + "]", outputs.get(rank), inputs.get(rank).size());
        List<NDArray> o = List.copyOf(outputs);
        List<NDArray> i = List.copyOf(inputs);
        List<NDArray> all = new ArrayList<>(o);
        all.addAll(i);
        // Blocks may differ in size from rank to rank: only the type is compared across ranks.
        return run(Collective.ALL_TO_ALL, null, -1, all, List.of(), b -> b.allToAll(o, i));
    }

    /** Checks the arguments of {@link ProcessGroup#allToAllSingleAsync}, then starts it. */
    Work allToAllSingle(NDArray output, NDArray input, long[] outputSplits, long[] inputSplits) {
        Checks.array("input", input);
        Checks.array("output", output);
        Checks.like("output", output, input.getDataType(), output.getShape());
        long[] outs = Checks.splits("output", outputSplits, output, size);
        long[] ins = Checks.splits("input", inputSplits, input, size);
        // This rank's own block never crosses the wire, so no peer could catch a mismatch there.
        long outElements = outs[rank] * Checks.rowElements(output);
        long inElements = ins[rank] * Checks.rowElements(input);
        if (outElements != inElements) {
            throw new IllegalArgumentException(
                    "output splits["
                            + rank
                            + "]: "
                            + outs[rank]
                            + " rows, "
                            + outElements
                            + " elements (expected: as many elements as input splits["
                            + rank
                            + "], "
                            + ins[rank]
                            + " rows of "
                            + inElements
                            + " elements: this rank's block to itself)");
        }
        return run(
                Collective.ALL_TO_ALL_SINGLE,
                null,
                -1,
                List.of(output, input),
                List.of(),
                b -> b.allToAllSingle(output, input, outs, ins));
    }

    /** Checks the arguments of {@link ProcessGroup#barrierAsync}, then starts it. */
    Work barrier() {
        return run(Collective.BARRIER, null, -1, List.of(), List.of(), Backend::barrier);
    }

    /**
     * Runs a collective on the backend of its arrays' device type, after the mismatch check (debug
     * level DETAIL) has compared it across ranks.
     *
     * @param kind the collective
     * @param op its reduction, or null
     * @param root its root, or -1
     * @param arrays every array it reads or writes, to pick the backend
     * @param agreed the arrays whose shapes every rank must agree on (the type of the first of
     *     {@code arrays} is compared in any case)
     * @param call the call on the chosen backend
     * @return its work
     */
    private Work run(
            Collective kind,
            ReduceOp op,
            int root,
            List<NDArray> arrays,
            List<NDArray> agreed,
            Function<Backend, Work> call) {
        context.checkOpen(group);
        Backend backend = backends.forArrays(arrays);
        if (check != null) {
            DataType type = arrays.isEmpty() ? null : arrays.get(0).getDataType();
            check.verify(kind, op, root, type, agreed);
        }
        return call.apply(backend);
    }

    /**
     * Returns the list of a rooted collective (gather's outputs, scatter's inputs): on the root,
     * checked to hold one array per rank shaped like {@code like}, and copied; elsewhere ignored,
     * and empty.
     */
    private List<NDArray> rootList(String name, List<NDArray> arrays, int root, NDArray like) {
        if (rank != root) {
            return List.of();
        }
        Checks.list(name, arrays, size, like.getDataType(), like.getShape());
        return List.copyOf(arrays);
    }

    private static List<NDArray> with(NDArray one, List<NDArray> more) {
        List<NDArray> all = new ArrayList<>(more.size() + 1);
        all.add(one);
        all.addAll(more);
        return all;
    }
}
