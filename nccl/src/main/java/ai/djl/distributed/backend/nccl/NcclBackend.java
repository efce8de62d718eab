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

import ai.djl.Device;
import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.PeerTransfer;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.ndarray.NDArray;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadFactory;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The {@code nccl} backend: every collective of the process-group API on GPU arrays, through NCCL,
 * as PyTorch's {@code ProcessGroupNCCL}.
 *
 * <p>One communicator per group, on the GPU of the first collective's arrays (lazily, as PyTorch),
 * or on the GPU named by the {@code device} option at creation. Its unique id travels through the
 * group's store ({@link UniqueIdExchange}). Each collective is ordered after the work already on
 * the caller's stream (DJL's legacy default stream) and runs on the backend's own stream; its
 * {@link Work} completes when an event recorded after it completes. A watchdog thread aborts the
 * communicator on an NCCL error or at the group's timeout and fails the pending and later works.
 *
 * <p>Every method returns once the collective is enqueued on the GPU; the arrays stay the caller's,
 * to be kept open until {@link Work#waitFor} returns. Thread-safe; NCCL calls on the communicator
 * are serialised.
 */
public final class NcclBackend implements Backend {

    private static final Logger logger = LoggerFactory.getLogger(NcclBackend.class);

    /** How often the watchdog looks at pending work (PyTorch's interval). */
    static final Duration WATCHDOG_INTERVAL = Duration.ofMillis(100);

    private final BackendContext context;
    private final NcclRuntime runtime;
    private final Supplier<DevicePointers> pointers;
    private final NcclPlans plans;
    private final UniqueIdExchange ids;
    private final boolean blockingWait;
    private final boolean eager; // the communicator was made at creation: sub-groups split it
    private final ThreadFactory threads; // the watchdogs'
    private NcclCommunicator comm; // guarded by this
    private NcclWatchdog watchdog; // guarded by this
    private Device device; // guarded by this
    private boolean closed; // guarded by this

    /**
     * Creates the backend of one group.
     *
     * @param context the group's store, rank, size and timeout
     * @param runtime the driver and NCCL found
     * @param pointers device pointers of DJL arrays (libtorch's shim, bound on first use)
     * @param eagerDevice the GPU to create the communicator on now, or null for the first
     *     collective's
     * @param blockingWait whether {@link Work#waitFor} blocks the host
     */
    NcclBackend(
            BackendContext context,
            NcclRuntime runtime,
            Supplier<DevicePointers> pointers,
            Integer eagerDevice,
            boolean blockingWait) {
        this(context, runtime, pointers, eagerDevice, blockingWait, Thread::new);
    }

    /**
     * Creates the backend of one group, its watchdogs' threads made by the given factory (tests
     * make it fail, as a JVM out of threads does).
     *
     * @param context the group's store, rank, size and timeout
     * @param runtime the driver and NCCL found
     * @param pointers device pointers of DJL arrays (libtorch's shim, bound on first use)
     * @param eagerDevice the GPU to create the communicator on now, or null for the first
     *     collective's
     * @param blockingWait whether {@link Work#waitFor} blocks the host
     * @param threads makes the watchdogs' threads
     */
    NcclBackend(
            BackendContext context,
            NcclRuntime runtime,
            Supplier<DevicePointers> pointers,
            Integer eagerDevice,
            boolean blockingWait,
            ThreadFactory threads) {
        this.context = context;
        this.runtime = runtime;
        this.pointers = pointers;
        this.plans = new NcclPlans(context.rank(), context.size());
        this.ids = new UniqueIdExchange(context.store(), context.rank(), context.timeout());
        this.blockingWait = blockingWait;
        this.eager = eagerDevice != null;
        this.threads = threads;
        if (eagerDevice != null) {
            communicator(Device.gpu(eagerDevice), "the eager communicator");
        }
    }

    /** A sub-group's backend on a communicator split off its parent's. */
    private NcclBackend(NcclBackend parent, BackendContext context, NcclCommunicator split) {
        this(context, parent.runtime, parent.pointers, null, parent.blockingWait, parent.threads);
        synchronized (this) {
            adopt(split, parent.deviceOf());
        }
    }

    private synchronized Device deviceOf() {
        return device;
    }

    /** {@inheritDoc} */
    @Override
    public String getName() {
        return NcclOps.BACKEND;
    }

    /** {@inheritDoc} */
    @Override
    public Work broadcast(NDArray array, int root) {
        return run("broadcast", List.of(array), v -> plans.broadcast(v.get(0), root), false);
    }

    /** {@inheritDoc} */
    @Override
    public Work allReduce(List<NDArray> arrays, ReduceOp op) {
        return run("allReduce(" + op + ")", arrays, v -> plans.allReduce(v, op), false);
    }

    /** {@inheritDoc} */
    @Override
    public Work reduce(NDArray array, int root, ReduceOp op) {
        return run(
                "reduce(" + op + ")", List.of(array), v -> plans.reduce(v.get(0), root, op), false);
    }

    /** {@inheritDoc} */
    @Override
    public Work allGather(List<NDArray> outputs, NDArray input) {
        return run(
                "allGather",
                concat(outputs, input),
                v -> plans.allGather(v.subList(0, outputs.size()), v.get(outputs.size())),
                false);
    }

    /** {@inheritDoc} */
    @Override
    public Work allGatherIntoTensor(NDArray output, NDArray input) {
        return run(
                "allGatherIntoTensor",
                List.of(output, input),
                v -> plans.allGatherIntoTensor(v.get(0), v.get(1)),
                false);
    }

    /** {@inheritDoc} */
    @Override
    public Work gather(List<NDArray> outputs, NDArray input, int root) {
        return run(
                "gather",
                concat(outputs, input),
                v -> plans.gather(v.subList(0, outputs.size()), v.get(outputs.size()), root),
                false);
    }

    /** {@inheritDoc} */
    @Override
    public Work scatter(NDArray output, List<NDArray> inputs, int root) {
        return run(
                "scatter",
                concat(inputs, output),
                v -> plans.scatter(v.get(inputs.size()), v.subList(0, inputs.size()), root),
                false);
    }

    /** {@inheritDoc} */
    @Override
    public Work reduceScatter(NDArray output, List<NDArray> inputs, ReduceOp op) {
        return run(
                "reduceScatter(" + op + ")",
                concat(inputs, output),
                v -> plans.reduceScatter(v.get(inputs.size()), v.subList(0, inputs.size()), op),
                false);
    }

    /** {@inheritDoc} */
    @Override
    public Work reduceScatterTensor(NDArray output, NDArray input, ReduceOp op) {
        return run(
                "reduceScatterTensor(" + op + ")",
                List.of(output, input),
                v -> plans.reduceScatterTensor(v.get(0), v.get(1), op),
                false);
    }

    /** {@inheritDoc} */
    @Override
    public Work allToAllSingle(
            NDArray output, NDArray input, long[] outputSplits, long[] inputSplits) {
        long[] outs = outputSplits.clone();
        long[] ins = inputSplits.clone();
        return run(
                "allToAllSingle",
                List.of(output, input),
                v -> plans.allToAllSingle(v.get(0), v.get(1), outs, ins),
                false);
    }

    /** {@inheritDoc} */
    @Override
    public Work allToAll(List<NDArray> outputs, List<NDArray> inputs) {
        List<NDArray> all = new ArrayList<>(outputs);
        all.addAll(inputs);
        int n = outputs.size();
        return run(
                "allToAll", all, v -> plans.allToAll(v.subList(0, n), v.subList(n, 2 * n)), false);
    }

    /**
     * {@inheritDoc}
     *
     * <p>As PyTorch's: a one-element all-reduce on the communicator's GPU, whose work blocks the
     * host in {@link Work#waitFor}. Before any collective has chosen a GPU (and without the {@code
     * device} option) it runs on GPU {@code LOCAL_RANK}, or, without that variable, on GPU {@code
     * rank % GPUs}, as PyTorch guesses; a process that sees one GPU (each worker given its own by
     * {@code CUDA_VISIBLE_DEVICES}) runs it on GPU 0.
     */
    @Override
    public Work barrier() {
        NcclCommunicator c;
        synchronized (this) {
            c = communicator(device != null ? device : guessDevice(), "barrier");
        }
        return launch("barrier", c, plans.barrier(c.scratch()), List.of(), true);
    }

    /** {@inheritDoc} */
    @Override
    public Work send(NDArray array, int dst, int tag) {
        return run("send(to " + dst + ")", List.of(array), v -> plans.send(v.get(0), dst), false);
    }

    /** {@inheritDoc} */
    @Override
    public Work recv(NDArray array, int src, int tag) {
        return run("recv(from " + src + ")", List.of(array), v -> plans.recv(v.get(0), src), false);
    }

    /**
     * {@inheritDoc}
     *
     * <p>As one NCCL group, so that transfers that depend on one another (each rank sending before
     * it receives) cannot deadlock; every transfer's work is the group's.
     */
    @Override
    public List<Work> sendRecvBatch(List<PeerTransfer> transfers) {
        if (transfers.isEmpty()) {
            return List.of();
        }
        List<NDArray> arrays = new ArrayList<>(transfers.size());
        for (PeerTransfer t : transfers) {
            arrays.add(t.array());
        }
        Work work =
                run(
                        "sendRecvBatch(" + transfers.size() + ")",
                        arrays,
                        v -> plans.sendRecv(v, transfers),
                        false);
        return Collections.nCopies(transfers.size(), work);
    }

    /**
     * Runs a collective on DJL arrays: their views checked against the communicator's GPU, then the
     * plan issued.
     */
    private Work run(
            String what,
            List<NDArray> arrays,
            Function<List<TensorView>, List<NcclCall>> plan,
            boolean hostWait) {
        Device d = arrays.get(0).getDevice();
        NcclCommunicator c = communicator(d, what); // the GPU checked before the arrays' views
        DevicePointers dp = pointers.get();
        List<TensorView> views = new ArrayList<>(arrays.size());
        for (NDArray a : arrays) {
            views.add(dp.require(a, d));
        }
        return launch(what, c, plan.apply(views), arrays, hostWait);
    }

    /**
     * Runs a collective on checked views of arrays on one GPU (the DJL path above, and the GPU
     * tests' tensors of the machine's own libtorch).
     *
     * @param what the collective, for messages
     * @param d the arrays' GPU
     * @param views their views, checked by {@link DevicePointers#check}
     * @param plan the collective's plan on them
     * @param keep what must stay referenced until the work ends
     * @param hostWait whether the work's {@code waitFor} blocks the host
     * @return the work
     */
    Work runOn(
            String what,
            Device d,
            List<TensorView> views,
            Function<List<TensorView>, List<NcclCall>> plan,
            List<?> keep,
            boolean hostWait) {
        return launch(what, communicator(d, what), plan.apply(views), keep, hostWait);
    }

    /**
     * Issues a plan on the communicator and returns its work, watched by the watchdog. The views of
     * {@code keep} are already in the plan; {@code keep} stays referenced until the work ends.
     *
     * @param what the collective, for messages
     * @param c the communicator
     * @param plan the calls
     * @param keep what must stay referenced until the work ends
     * @param hostWait whether the work's {@code waitFor} blocks the host
     * @return the work
     */
    private Work launch(
            String what, NcclCommunicator c, List<NcclCall> plan, List<?> keep, boolean hostWait) {
        NcclWatchdog dog;
        synchronized (this) {
            dog = watchdog;
        }
        DistributedException broken = dog.failure();
        if (broken != null) {
            throw new DistributedException(
                    what + ": the NCCL communicator was aborted earlier: " + broken.getMessage(),
                    broken);
        }
        String description = NcclOps.BACKEND + " " + what + " (rank " + context.rank() + ")";
        c.makeCurrent(); // the work's events belong to the communicator's context
        NcclWork work =
                new NcclWork(
                        description, c, keep, context.timeout(), hostWait || blockingWait, dog);
        try {
            c.issue(plan, work.startEvent(), work.endEvent(), description, context.timeout());
        } catch (RuntimeException e) {
            DistributedException f =
                    e instanceof DistributedException de
                            ? de
                            : new DistributedException(description + " failed: " + e, e);
            // A call NCCL refused, or one still in progress at the deadline, leaves a
            // non-blocking communicator in error or busy: no later call may rely on it. The abort
            // before the throw: the caller takes its arrays back, and calls already enqueued on
            // them must have stopped.
            dog.breakWith(f);
            work.fail(f);
            throw e;
        }
        dog.watch(work);
        return work;
    }

    /**
     * The communicator, created on the given GPU on first use (under this monitor, so that creation
     * happens once).
     *
     * @throws IllegalArgumentException for arrays on another GPU than the communicator's
     */
    private synchronized NcclCommunicator communicator(Device d, String what) {
        if (closed) {
            throw new DistributedException(
                    what + ": the " + NcclOps.BACKEND + " backend is closed");
        }
        if (!Device.Type.GPU.equals(d.getDeviceType())) {
            throw new IllegalArgumentException(
                    "array: on "
                            + d
                            + " (expected: a GPU array for the "
                            + NcclOps.BACKEND
                            + " backend)");
        }
        if (comm != null) {
            if (!d.equals(device)) {
                throw new IllegalArgumentException(
                        "array: on "
                                + d
                                + " (expected: on "
                                + device
                                + ", the GPU of this rank's NCCL communicator; one GPU per rank)");
            }
            return comm;
        }
        long t0 = System.nanoTime();
        adopt(
                NcclCommunicator.create(
                        runtime,
                        d.getDeviceId(),
                        context.rank(),
                        context.size(),
                        () -> ids.shareForGroup(this::newUniqueId),
                        context.timeout()),
                d);
        logger.info(
                "{} ready in {} ms (NCCL {} from {})",
                comm,
                (System.nanoTime() - t0) / 1_000_000,
                runtime.nccl().version(),
                runtime.nccl().path());
        return comm;
    }

    /**
     * Takes a new communicator and starts its watchdog; if the watchdog cannot start (a JVM out of
     * threads), aborts and frees the communicator, and this backend has none still.
     */
    private synchronized void adopt(NcclCommunicator c, Device d) {
        NcclWatchdog dog;
        try {
            dog =
                    new NcclWatchdog(
                            c,
                            WATCHDOG_INTERVAL,
                            "djl-nccl-watchdog-rank" + context.rank(),
                            threads);
        } catch (RuntimeException | Error e) {
            // Abort rather than finalize: it never waits for the other ranks, which learn of
            // this one at their timeout.
            NcclCommunicator.cleanUp(e, c::abort, c::free);
            throw e;
        }
        comm = c;
        device = d;
        watchdog = dog;
    }

    /**
     * {@inheritDoc}
     *
     * <p>As PyTorch's {@code new_group}: only a communicator created eagerly (the {@code device}
     * option, PyTorch's {@code device_id}) is split ({@code ncclCommSplit}, colour the sub-group's
     * first rank, key the rank in it); ranks outside the sub-group take part with {@code
     * NCCL_SPLIT_NOCOLOR}. The condition is an option, the same on every rank, rather than whether
     * this rank has run a collective yet, so that every rank decides alike. Otherwise the sub-group
     * makes its own communicator through its store on its first collective. Every rank bounds the
     * split by this (the parent) group's timeout, not the sub-group's.
     */
    @Override
    public Optional<Backend> split(int[] members, BackendContext child) {
        NcclCommunicator parent;
        NcclWatchdog dog;
        synchronized (this) {
            parent = closed || !eager ? null : comm;
            dog = watchdog;
        }
        if (parent == null) {
            return Optional.empty();
        }
        NcclCommunicator sub;
        try {
            if (child == null) {
                parent.splitOff(context.timeout());
                return Optional.empty();
            }
            // The parent's timeout, on members as on the others: the sub-group's is known to its
            // members only, and a side giving up first would abort the parent under the rest.
            sub = parent.split(runtime, members[0], child.rank(), child.size(), context.timeout());
        } catch (RuntimeException e) {
            // A split that failed or timed out leaves the parent busy or in error.
            dog.breakWith(
                    e instanceof DistributedException de
                            ? de
                            : new DistributedException("newGroup: ncclCommSplit failed: " + e, e));
            throw e;
        }
        try {
            return Optional.of(new NcclBackend(this, child, sub));
        } catch (RuntimeException | Error e) {
            // Not NCCL's failure (the child's watchdog could not start): the parent stays sound,
            // the child goes (idempotent where adopt has already let it go).
            NcclCommunicator.cleanUp(e, sub::abort, sub::free);
            throw e;
        }
    }

    private Device guessDevice() {
        int gpus = runtime.gpus();
        // The rule of Distributed.localDevice, its twin in pg (a layer this one may not import):
        // a worker that sees one GPU (CUDA_VISIBLE_DEVICES) uses GPU 0 whatever its LOCAL_RANK,
        // as PyTorch's rank % GPUs also gives.
        if (gpus == 1) {
            return Device.gpu(0);
        }
        return DistributedEnv.fromProcess()
                .getInt("LOCAL_RANK")
                .map(Device::gpu)
                .orElseGet(() -> Device.gpu(context.rank() % Math.max(1, gpus)));
    }

    private byte[] newUniqueId() {
        NcclUniqueId id = new NcclUniqueId();
        int r = runtime.nccl().library().ncclGetUniqueId(id);
        if (r != NcclResult.SUCCESS.code()) {
            throw new DistributedException(
                    "ncclGetUniqueId -> "
                            + r
                            + " "
                            + runtime.nccl().library().ncclGetErrorString(r));
        }
        return id.toBytes();
    }

    private static List<NDArray> concat(List<NDArray> arrays, NDArray last) {
        List<NDArray> all = new ArrayList<>(arrays.size() + 1);
        all.addAll(arrays);
        all.add(last);
        return all;
    }

    /**
     * {@inheritDoc}
     *
     * <p>Stops the watchdog, then finalizes the communicator (pending collectives complete, bounded
     * by the group's timeout; at the deadline it is aborted) and fails what is still pending.
     */
    @Override
    public void close() {
        NcclCommunicator c;
        NcclWatchdog dog;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            c = comm;
            dog = watchdog;
        }
        if (c == null) {
            return;
        }
        dog.close();
        // Every step runs even when the CUDA context cannot be made current any more (a driver
        // going away): the communicator is aborted then, pending works fail, references go back;
        // the first failure is thrown at the end.
        RuntimeException failure = null;
        try {
            c.finalizeOrAbort(context.timeout());
        } catch (RuntimeException e) {
            failure = e;
        }
        try {
            c.makeCurrent();
        } catch (RuntimeException e) {
            failure = first(failure, e);
        }
        try {
            dog.closeWith(
                    new DistributedException(
                            "the "
                                    + NcclOps.BACKEND
                                    + " backend was closed"
                                    + (c.aborted()
                                            ? "; finalizing did not complete, so its communicator"
                                                    + " was aborted and this collective cut short"
                                            : "")));
        } catch (RuntimeException e) {
            failure = first(failure, e);
        }
        try {
            c.free();
        } catch (RuntimeException e) {
            failure = first(failure, e);
        }
        if (failure != null) {
            throw failure;
        }
    }

    private static RuntimeException first(RuntimeException first, RuntimeException next) {
        if (first == null) {
            return next;
        }
        if (first != next) {
            first.addSuppressed(next);
        }
        return first;
    }

    @Override
    public String toString() {
        synchronized (this) {
            return NcclOps.BACKEND
                    + " (rank "
                    + context.rank()
                    + " of "
                    + context.size()
                    + (comm != null ? ", " + comm : ", no communicator yet")
                    + ")";
        }
    }
}
