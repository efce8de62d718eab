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
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.CallerWaits;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.Stores;
import ai.djl.ndarray.NDArray;

import java.time.Duration;
import java.util.List;

/**
 * A group of ranks that run collectives together: torch.distributed's {@code ProcessGroup}, on DJL
 * NDArrays. Create the world group with {@link ProcessGroups#init} (or the static facade {@link
 * Distributed}) and sub-groups with {@link #newGroup}.
 *
 * <p><b>Ranks and order.</b> Ranks in arguments are this group's ranks, as PyTorch's {@code
 * group_src} and {@code group_dst}; PyTorch's {@code src} and {@code dst} are world ranks, which
 * {@link #getGroupRank} converts ({@link #getGlobalRank} maps the other way). Every rank of the
 * group must issue the same collectives, with the same sizes and types, in the same order; a rank
 * that does not is told so, naming the other side, rather than left hanging. Point-to-point sends
 * and receives pair up by peer and tag.
 *
 * <p><b>Blocking.</b> Each collective has a synchronous form, which blocks until the operation is
 * done on this rank, and an {@code ...Async} form, which returns a {@link Work} at once (under
 * {@link DebugLevel#DETAIL}, once every rank has issued it: see {@link
 * ProcessGroups.Builder#optDebugLevel}). Every operation is bounded by the group's timeout from
 * when it is called (time queued behind earlier collectives included), and one that runs past it
 * aborts the group; when a peer dies, every surviving rank's pending and later operations fail with
 * a {@link ai.djl.distributed.CommunicationException} naming it, and the group must be destroyed.
 *
 * <p><b>Arrays.</b> The caller owns every NDArray; the group never closes one. Operations work in
 * place, as PyTorch's do: outputs (and the in-place array of broadcast and allReduce) are written,
 * inputs only read. Until an asynchronous operation completes, keep its arrays open, do not write
 * its inputs and do not read its outputs.
 *
 * <p>Thread-safe; {@link #close()} destroys the group.
 */
public final class ProcessGroup implements AutoCloseable {

    private final GroupContext context;
    private final String name;
    private final int rank;
    private final int size;
    private final int[] globalRanks;
    private final DeviceBackends backends;
    private final CollectiveCheck check; // null unless the debug level is DETAIL
    private final Duration timeout;
    private final ObjectCollectives objects;
    private final MonitoredBarrier monitoredBarrier;
    // This class is the API; each operation's argument checks and dispatch to a backend live in
    // the collectives' and the point-to-point operations' own classes.
    private final CollectiveCalls calls;
    private final PointToPointCalls p2p;

    ProcessGroup(
            GroupContext context,
            String name,
            int rank,
            int[] globalRanks,
            DeviceBackends backends,
            CollectiveCheck check,
            Duration timeout) {
        this.context = context;
        this.name = name;
        this.rank = rank;
        this.size = globalRanks.length;
        this.globalRanks = globalRanks.clone();
        this.backends = backends;
        this.check = check;
        this.timeout = timeout;
        this.objects = new ObjectCollectives(this);
        this.monitoredBarrier = new MonitoredBarrier(this, context.groupStore(name));
        this.calls = new CollectiveCalls(this, context, backends, check);
        this.p2p = new PointToPointCalls(this, context, backends);
    }

    /**
     * Returns this process's rank in the group.
     *
     * @return the rank, in {@code [0, getSize())}
     */
    public int getRank() {
        return rank;
    }

    /**
     * Returns the number of ranks in the group.
     *
     * @return the size
     */
    public int getSize() {
        return size;
    }

    /**
     * Returns the group's name: "0" for the world, then "1", "2", ... in creation order.
     *
     * @return the name
     */
    public String getName() {
        return name;
    }

    /**
     * Returns the group's backend string as it was given, lower case: {@code "cpu"}, {@code
     * "gloo"}, or pairs such as {@code "cpu:cpu,gpu:nccl"} (PyTorch's {@code get_backend}).
     *
     * @return the backend string
     */
    public String getBackendName() {
        return backends.name();
    }

    /**
     * Returns the bound of every operation of this group.
     *
     * @return the timeout
     */
    public Duration getTimeout() {
        return timeout;
    }

    /**
     * Returns the world rank of a group rank.
     *
     * @param groupRank a rank of this group
     * @return its world rank
     */
    public int getGlobalRank(int groupRank) {
        Checks.rank("groupRank", groupRank, size);
        return globalRanks[groupRank];
    }

    /**
     * Returns the group rank of a world rank.
     *
     * @param globalRank a world rank
     * @return its rank in this group, or -1 if it is not a member
     */
    public int getGroupRank(int globalRank) {
        for (int i = 0; i < size; i++) {
            if (globalRanks[i] == globalRank) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Creates a sub-group of the world, as {@code torch.distributed.new_group}. Every rank of the
     * world must call this, in the same order relative to other {@code newGroup} calls and to the
     * world's collectives, even ranks that are not members: a backend may split the world's
     * communicator, a collective over the world (NCCL's {@code ncclCommSplit}). Blocks until the
     * members have connected.
     *
     * @param ranks the members' world ranks, in any order (a member's group rank is its position
     *     among them sorted); none for every rank of the world, as {@code new_group()}
     * @return the group, or empty on a rank that is not a member
     */
    public java.util.Optional<ProcessGroup> newGroup(int... ranks) {
        return context.newGroup(ranks, timeout);
    }

    /**
     * Broadcasts {@code array} from rank {@code src} to every rank, in place.
     *
     * @param array read on {@code src}, overwritten elsewhere; the same shape and type everywhere
     * @param src the source rank
     */
    public void broadcast(NDArray array, int src) {
        CallerWaits.call(() -> broadcastAsync(array, src)).waitFor();
    }

    /**
     * Starts {@link #broadcast(NDArray, int)}.
     *
     * @param array read on {@code src}, overwritten elsewhere
     * @param src the source rank
     * @return the work
     */
    public Work broadcastAsync(NDArray array, int src) {
        return calls.broadcast(array, src);
    }

    /**
     * Sums {@code array} across ranks, in place.
     *
     * @param array the data; the same shape and type everywhere
     */
    public void allReduce(NDArray array) {
        allReduce(array, ReduceOp.SUM);
    }

    /**
     * Reduces {@code array} across ranks with {@code op}, in place.
     *
     * @param array the data; the same shape and type everywhere
     * @param op the reduction
     */
    public void allReduce(NDArray array, ReduceOp op) {
        CallerWaits.call(() -> allReduceAsync(array, op)).waitFor();
    }

    /**
     * Starts {@link #allReduce(NDArray, ReduceOp)}.
     *
     * @param array the data
     * @param op the reduction
     * @return the work
     */
    public Work allReduceAsync(NDArray array, ReduceOp op) {
        return allReduceCoalescedAsync(List.of(Checks.array("array", array)), op);
    }

    /**
     * Reduces several arrays of one type as one operation (one message per step for all), in place.
     *
     * @param arrays the arrays; the same list of shapes everywhere
     * @param op the reduction
     */
    public void allReduceCoalesced(List<NDArray> arrays, ReduceOp op) {
        CallerWaits.call(() -> allReduceCoalescedAsync(arrays, op)).waitFor();
    }

    /**
     * Starts {@link #allReduceCoalesced(List, ReduceOp)}.
     *
     * @param arrays the arrays
     * @param op the reduction
     * @return the work
     */
    public Work allReduceCoalescedAsync(List<NDArray> arrays, ReduceOp op) {
        return calls.allReduceCoalesced(arrays, op);
    }

    /**
     * Reduces {@code array} across ranks into rank {@code dst}'s.
     *
     * @param array the data: the result on {@code dst}, unchanged elsewhere
     * @param dst the destination rank
     * @param op the reduction
     */
    public void reduce(NDArray array, int dst, ReduceOp op) {
        CallerWaits.call(() -> reduceAsync(array, dst, op)).waitFor();
    }

    /**
     * Starts {@link #reduce(NDArray, int, ReduceOp)}.
     *
     * @param array the data
     * @param dst the destination rank
     * @param op the reduction
     * @return the work
     */
    public Work reduceAsync(NDArray array, int dst, ReduceOp op) {
        return calls.reduce(array, dst, op);
    }

    /**
     * Gathers every rank's {@code input} into {@code outputs}, on every rank.
     *
     * @param outputs one array per rank, each shaped like {@code input}; written
     * @param input this rank's data
     */
    public void allGather(List<NDArray> outputs, NDArray input) {
        CallerWaits.call(() -> allGatherAsync(outputs, input)).waitFor();
    }

    /**
     * Starts {@link #allGather(List, NDArray)}.
     *
     * @param outputs one array per rank
     * @param input this rank's data
     * @return the work
     */
    public Work allGatherAsync(List<NDArray> outputs, NDArray input) {
        return calls.allGather(outputs, input);
    }

    /**
     * Gathers every rank's {@code input} into one array, rank-major, as {@code
     * all_gather_into_tensor}.
     *
     * @param output the group size times the input's elements, of the input's type; written
     * @param input this rank's data
     */
    public void allGatherIntoTensor(NDArray output, NDArray input) {
        CallerWaits.call(() -> allGatherIntoTensorAsync(output, input)).waitFor();
    }

    /**
     * Starts {@link #allGatherIntoTensor(NDArray, NDArray)}.
     *
     * @param output the result
     * @param input this rank's data
     * @return the work
     */
    public Work allGatherIntoTensorAsync(NDArray output, NDArray input) {
        return calls.allGatherIntoTensor(output, input);
    }

    /**
     * Gathers every rank's {@code input} into rank {@code dst}'s {@code outputs}.
     *
     * @param input this rank's data
     * @param outputs on {@code dst}, one array per rank shaped like {@code input}; elsewhere
     *     ignored (may be null or empty)
     * @param dst the destination rank
     */
    public void gather(NDArray input, List<NDArray> outputs, int dst) {
        CallerWaits.call(() -> gatherAsync(input, outputs, dst)).waitFor();
    }

    /**
     * Starts {@link #gather(NDArray, List, int)}.
     *
     * @param input this rank's data
     * @param outputs on {@code dst}, one array per rank
     * @param dst the destination rank
     * @return the work
     */
    public Work gatherAsync(NDArray input, List<NDArray> outputs, int dst) {
        return calls.gather(input, outputs, dst);
    }

    /**
     * Scatters rank {@code src}'s {@code inputs}, one per rank, into every rank's {@code output}.
     *
     * @param output this rank's destination; written
     * @param inputs on {@code src}, one array per rank shaped like {@code output}; elsewhere
     *     ignored
     * @param src the source rank
     */
    public void scatter(NDArray output, List<NDArray> inputs, int src) {
        CallerWaits.call(() -> scatterAsync(output, inputs, src)).waitFor();
    }

    /**
     * Starts {@link #scatter(NDArray, List, int)}.
     *
     * @param output this rank's destination
     * @param inputs on {@code src}, one array per rank
     * @param src the source rank
     * @return the work
     */
    public Work scatterAsync(NDArray output, List<NDArray> inputs, int src) {
        return calls.scatter(output, inputs, src);
    }

    /**
     * Reduces input {@code j} of every rank into rank j's {@code output}.
     *
     * @param output this rank's result; written
     * @param inputs one array per rank, each shaped like {@code output}; only read
     * @param op the reduction
     */
    public void reduceScatter(NDArray output, List<NDArray> inputs, ReduceOp op) {
        CallerWaits.call(() -> reduceScatterAsync(output, inputs, op)).waitFor();
    }

    /**
     * Starts {@link #reduceScatter(NDArray, List, ReduceOp)}.
     *
     * @param output this rank's result
     * @param inputs one array per rank
     * @param op the reduction
     * @return the work
     */
    public Work reduceScatterAsync(NDArray output, List<NDArray> inputs, ReduceOp op) {
        return calls.reduceScatter(output, inputs, op);
    }

    /**
     * Reduces block {@code j} of every rank's {@code input} into rank j's {@code output}, as {@code
     * reduce_scatter_tensor}.
     *
     * @param output this rank's result; written
     * @param input the group size times the output's elements, rank-major; only read
     * @param op the reduction
     */
    public void reduceScatterTensor(NDArray output, NDArray input, ReduceOp op) {
        CallerWaits.call(() -> reduceScatterTensorAsync(output, input, op)).waitFor();
    }

    /**
     * Starts {@link #reduceScatterTensor(NDArray, NDArray, ReduceOp)}.
     *
     * @param output this rank's result
     * @param input every rank's block, rank-major
     * @param op the reduction
     * @return the work
     */
    public Work reduceScatterTensorAsync(NDArray output, NDArray input, ReduceOp op) {
        return calls.reduceScatterTensor(output, input, op);
    }

    /**
     * Sends {@code inputs[j]} to rank j and receives rank j's message into {@code outputs[j]}.
     * Sizes may differ per pair; each output must match what its sender sends.
     *
     * @param outputs one array per rank, of the inputs' type; written
     * @param inputs one array per rank
     */
    public void allToAll(List<NDArray> outputs, List<NDArray> inputs) {
        CallerWaits.call(() -> allToAllAsync(outputs, inputs)).waitFor();
    }

    /**
     * Starts {@link #allToAll(List, List)}.
     *
     * @param outputs one array per rank
     * @param inputs one array per rank
     * @return the work
     */
    public Work allToAllAsync(List<NDArray> outputs, List<NDArray> inputs) {
        return calls.allToAll(outputs, inputs);
    }

    /**
     * Splits {@code input}'s rows among the ranks and gathers every rank's rows for this one into
     * {@code output}, as {@code all_to_all_single}.
     *
     * @param output the received rows, rank-major; written
     * @param input the rows to send, rank-major
     * @param outputSplits rows to receive from each rank, or null for an even split
     * @param inputSplits rows to send to each rank, or null for an even split
     */
    public void allToAllSingle(
            NDArray output, NDArray input, long[] outputSplits, long[] inputSplits) {
        CallerWaits.call(() -> allToAllSingleAsync(output, input, outputSplits, inputSplits))
                .waitFor();
    }

    /**
     * Starts {@link #allToAllSingle(NDArray, NDArray, long[], long[])}.
     *
     * @param output the received rows
     * @param input the rows to send
     * @param outputSplits rows from each rank, or null
     * @param inputSplits rows to each rank, or null
     * @return the work
     */
    public Work allToAllSingleAsync(
            NDArray output, NDArray input, long[] outputSplits, long[] inputSplits) {
        return calls.allToAllSingle(output, input, outputSplits, inputSplits);
    }

    /** Blocks until every rank of the group has entered the barrier. */
    public void barrier() {
        CallerWaits.call(() -> barrierAsync()).waitFor();
    }

    /**
     * Starts {@link #barrier()}.
     *
     * @return the work, complete once every rank has entered
     */
    public Work barrierAsync() {
        return calls.barrier();
    }

    /**
     * Runs {@link #monitoredBarrier(Duration, boolean)} with the group's timeout, naming the first
     * missing rank.
     */
    public void monitoredBarrier() {
        monitoredBarrier(timeout, false);
    }

    /**
     * A barrier that names the ranks that did not reach it, as {@code
     * torch.distributed.monitored_barrier}: rank 0 waits up to {@code timeout} from its call for
     * every other rank to arrive, then publishes its verdict. Blocks until then on every rank.
     *
     * <p>On failure, rank 0 throws naming the ranks that did not arrive in time (every one with
     * {@code waitAllRanks}, else the lowest, as PyTorch reports the first) and the timeout; every
     * other rank, including one that arrives after the verdict, throws naming rank 0's verdict. A
     * rank that gets no verdict (rank 0 dead, stuck, or not calling) throws naming rank 0 at its
     * own deadline: twice the timeout plus 2 seconds from its call, since rank 0's deadline counts
     * from rank 0's call.
     *
     * <p>It runs through the group's store, not the backend: it takes no part in the order of
     * collectives (a rank hung in one simply never arrives), works on every transport and backend,
     * even after a failed collective has aborted the group, and a failure aborts nothing: the group
     * stays usable, though the caller usually exits. Every rank of the group must make the same
     * sequence of monitored barriers (the n-th call of one rank meets the n-th of the others); they
     * may interleave with collectives freely.
     *
     * @param timeout how long rank 0 waits for the others; positive
     * @param waitAllRanks whether rank 0 names every rank missing, rather than only the first
     * @throws ai.djl.distributed.CommunicationException if some rank did not arrive in time (on
     *     rank 0, {@link ai.djl.distributed.CommunicationException#getPeerRank()} is the first
     *     missing rank; elsewhere it is 0)
     * @throws ai.djl.distributed.store.StoreException if the store fails
     */
    public void monitoredBarrier(Duration timeout, boolean waitAllRanks) {
        long start = System.nanoTime();
        Stores.checkTimeout(timeout);
        context.checkOpen(this);
        monitoredBarrier.run(start, timeout, waitAllRanks);
    }

    /**
     * Sends {@code array} to rank {@code dst}; blocks until it has left this process.
     *
     * @param array the data
     * @param dst the receiver
     * @param tag pairs the send with the receiver's receive; non-negative
     */
    public void send(NDArray array, int dst, int tag) {
        isend(array, dst, tag).waitFor();
    }

    /**
     * Starts {@link #send(NDArray, int, int)}; the send goes out even while collectives queue.
     *
     * @param array the data; unchanged until the work completes
     * @param dst the receiver
     * @param tag pairs the send with a receive
     * @return the work
     */
    public Work isend(NDArray array, int dst, int tag) {
        return p2p.isend(array, dst, tag);
    }

    /**
     * Receives into {@code array} from rank {@code src}; blocks until the data has arrived.
     *
     * @param array where the data goes; its type and element count must match the sender's
     * @param src the sender
     * @param tag pairs the receive with the sender's send; non-negative
     */
    public void recv(NDArray array, int src, int tag) {
        irecv(array, src, tag).waitFor();
    }

    /**
     * Starts {@link #recv(NDArray, int, int)}.
     *
     * @param array where the data goes
     * @param src the sender
     * @param tag pairs the receive with a send
     * @return the work
     */
    public Work irecv(NDArray array, int src, int tag) {
        return p2p.irecv(array, src, tag);
    }

    /**
     * Starts several sends and receives together, as {@code batch_isend_irecv}: on one backend,
     * which may post them as one operation (NCCL does, so that they cannot wait on one another).
     *
     * @param ops the operations, their arrays all of one device type
     * @return one work per operation, in order (the same work for all where they run as one)
     * @throws IllegalArgumentException naming an operation that is null or out of range, or the
     *     devices where the arrays mix device types
     */
    public List<Work> batchIsendIrecv(List<P2POp> ops) {
        return p2p.batchIsendIrecv(ops);
    }

    /**
     * Returns the collectives on byte arrays: broadcast, all-gather, gather and scatter of
     * serialized objects.
     *
     * @return the object collectives
     */
    public ObjectCollectives objects() {
        return objects;
    }

    /** Destroys the group: releases its connections and threads. Idempotent. */
    @Override
    public void close() {
        context.close(this);
    }

    /** The group's backends, by device type (for splitting sub-groups off them). */
    DeviceBackends backends() {
        return backends;
    }

    /** Closes the group's backends and its mismatch check; called once, by the context. */
    void closeBackends() {
        try {
            backends.close();
        } finally {
            if (check != null) {
                check.close();
            }
        }
    }

    /**
     * Returns the device that operations without arrays, and object collectives, run on: the CPU
     * where the group has a CPU backend, else this worker's device of the group's first device
     * type: for GPUs {@link Distributed#localDevice()}, else number {@code LOCAL_RANK} (0 when
     * unset), as PyTorch's object collectives use the current CUDA device that torchrun users set
     * to it.
     *
     * @return the device
     */
    public Device getDefaultDevice() {
        String type = backends.defaultDeviceType();
        if (Device.Type.CPU.equals(type)) {
            return Device.cpu();
        }
        if (Device.Type.GPU.equals(type)) {
            Device local = Distributed.localDevice();
            if (local.isGpu()) {
                return local;
            }
        }
        return Device.of(type, DistributedEnv.fromProcess().getInt("LOCAL_RANK").orElse(0));
    }

    /**
     * Describes the group: its name, this rank, the size and each device type's backend.
     *
     * @return the description
     */
    @Override
    public String toString() {
        return "ProcessGroup(" + name + ", rank " + rank + " of " + size + ", " + backends + ")";
    }

    GroupContext context() {
        return context;
    }

    Store store() {
        return context.store();
    }
}
