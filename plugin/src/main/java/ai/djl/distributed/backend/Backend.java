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
package ai.djl.distributed.backend;

import ai.djl.distributed.NotSupportedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.ndarray.NDArray;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The communication engine under a {@link ai.djl.distributed.pg.ProcessGroup}: one method per
 * collective, as c10d's {@code Backend}. The process group has already validated every argument
 * (ranks in range, shapes and types consistent on this rank, the reduction valid for the type), so
 * a backend checks only what it alone knows (the device, what the peers called).
 *
 * <p>Ranks are group ranks. Every method returns at once with a {@link Work}; the operation runs in
 * the order the methods were called, on the backend's threads. Arrays stay owned by the caller, who
 * must keep them open and untouched until the work completes. Implementations are thread-safe; if
 * several threads issue collectives, the order they do so in must still be the same on every rank.
 * An operation a backend lacks throws {@link NotSupportedException} naming both.
 */
public interface Backend extends AutoCloseable {

    /**
     * Returns the backend's name, as passed to {@code initProcessGroup} (e.g. "cpu").
     *
     * @return the name
     */
    String getName();

    /**
     * Broadcasts the root's array into every rank's.
     *
     * @param array the data: read on the root, overwritten elsewhere
     * @param root the root rank
     * @return the work
     */
    default Work broadcast(NDArray array, int root) {
        throw new NotSupportedException(getName(), "broadcast");
    }

    /**
     * Reduces each array across ranks, in place, as one operation.
     *
     * @param arrays the arrays, the same list of shapes and types on every rank
     * @param op the reduction
     * @return the work
     */
    default Work allReduce(List<NDArray> arrays, ReduceOp op) {
        throw new NotSupportedException(getName(), "allReduce");
    }

    /**
     * Reduces the array across ranks into the root's array.
     *
     * @param array the data: the result on the root, unchanged elsewhere
     * @param root the root rank
     * @param op the reduction
     * @return the work
     */
    default Work reduce(NDArray array, int root, ReduceOp op) {
        throw new NotSupportedException(getName(), "reduce");
    }

    /**
     * Gathers every rank's input into every rank's outputs.
     *
     * @param outputs one array per rank, each shaped like the input
     * @param input this rank's data
     * @return the work
     */
    default Work allGather(List<NDArray> outputs, NDArray input) {
        throw new NotSupportedException(getName(), "allGather");
    }

    /**
     * Gathers every rank's input into one output, rank-major.
     *
     * @param output the size times the input's element count, contiguous
     * @param input this rank's data
     * @return the work
     */
    default Work allGatherIntoTensor(NDArray output, NDArray input) {
        throw new NotSupportedException(getName(), "allGatherIntoTensor");
    }

    /**
     * Gathers every rank's input into the root's outputs.
     *
     * @param outputs on the root, one array per rank; empty elsewhere
     * @param input this rank's data
     * @param root the root rank
     * @return the work
     */
    default Work gather(List<NDArray> outputs, NDArray input, int root) {
        throw new NotSupportedException(getName(), "gather");
    }

    /**
     * Scatters the root's inputs, one per rank, into every rank's output.
     *
     * @param output this rank's destination
     * @param inputs on the root, one array per rank; empty elsewhere
     * @param root the root rank
     * @return the work
     */
    default Work scatter(NDArray output, List<NDArray> inputs, int root) {
        throw new NotSupportedException(getName(), "scatter");
    }

    /**
     * Reduces input {@code j} of every rank into rank j's output.
     *
     * @param output this rank's result
     * @param inputs one array per rank, each shaped like the output
     * @param op the reduction
     * @return the work
     */
    default Work reduceScatter(NDArray output, List<NDArray> inputs, ReduceOp op) {
        throw new NotSupportedException(getName(), "reduceScatter");
    }

    /**
     * Reduces block {@code j} of every rank's input into rank j's output.
     *
     * @param output this rank's result
     * @param input the size times the output's element count, rank-major
     * @param op the reduction
     * @return the work
     */
    default Work reduceScatterTensor(NDArray output, NDArray input, ReduceOp op) {
        throw new NotSupportedException(getName(), "reduceScatterTensor");
    }

    /**
     * Sends rows of {@code input} to every rank and receives every rank's rows into {@code output},
     * as {@code all_to_all_single}.
     *
     * @param output where the received rows go, rank-major
     * @param input the rows to send, rank-major
     * @param outputSplits the number of rows received from each rank
     * @param inputSplits the number of rows sent to each rank
     * @return the work
     */
    default Work allToAllSingle(
            NDArray output, NDArray input, long[] outputSplits, long[] inputSplits) {
        throw new NotSupportedException(getName(), "allToAllSingle");
    }

    /**
     * Sends {@code inputs[j]} to rank j and receives rank j's into {@code outputs[j]}.
     *
     * @param outputs one array per rank
     * @param inputs one array per rank
     * @return the work
     */
    default Work allToAll(List<NDArray> outputs, List<NDArray> inputs) {
        throw new NotSupportedException(getName(), "allToAll");
    }

    /**
     * Blocks the returned work until every rank has entered the barrier.
     *
     * @return the work
     */
    default Work barrier() {
        throw new NotSupportedException(getName(), "barrier");
    }

    /**
     * Sends an array to one rank.
     *
     * @param array the data
     * @param dst the receiver
     * @param tag matches the receiver's tag
     * @return the work, complete once the data has left
     */
    default Work send(NDArray array, int dst, int tag) {
        throw new NotSupportedException(getName(), "send");
    }

    /**
     * Receives an array from one rank.
     *
     * @param array where the data goes; its size must match the sender's
     * @param src the sender
     * @param tag matches the sender's tag
     * @return the work
     */
    default Work recv(NDArray array, int src, int tag) {
        throw new NotSupportedException(getName(), "recv");
    }

    /**
     * Starts a batch of sends and receives, as {@code batch_isend_irecv}. By default each starts on
     * its own, in order; a backend whose transfers would block one another unless posted together
     * (NCCL's) posts the batch as one operation.
     *
     * @param transfers the sends and receives, checked by the process group
     * @return one work per transfer, in order (the same work for all where they run as one)
     */
    default List<Work> sendRecvBatch(List<PeerTransfer> transfers) {
        List<Work> works = new ArrayList<>(transfers.size());
        for (PeerTransfer t : transfers) {
            works.add(
                    t.send()
                            ? send(t.array(), t.peer(), t.tag())
                            : recv(t.array(), t.peer(), t.tag()));
        }
        return works;
    }

    /**
     * Makes a sub-group's backend out of this one, as PyTorch's {@code new_group} splits an NCCL
     * communicator ({@code ncclCommSplit}) rather than creating one afresh. Called on every rank of
     * this backend's group, in the same order relative to its collectives: ranks of the sub-group
     * pass its context, the others null. Blocks until every rank has called it, up to this
     * backend's group's timeout (the parent's, on members and non-members alike; never the
     * sub-group's, which the others do not know). By default, and where this backend cannot split
     * (on every rank alike), returns empty, and the sub-group's backend is created from its
     * provider.
     *
     * @param members the sub-group's ranks in this group, ascending
     * @param child the sub-group's context on a member, null elsewhere
     * @return the sub-group's backend on a member, if this backend made it
     */
    default Optional<Backend> split(int[] members, BackendContext child) {
        return Optional.empty();
    }

    /**
     * Releases the backend's connections and threads. Blocks while collectives already started
     * finish, or fail at their deadline; sends and receives still pending then fail, and so do
     * operations started afterwards. Idempotent.
     */
    @Override
    void close();
}
