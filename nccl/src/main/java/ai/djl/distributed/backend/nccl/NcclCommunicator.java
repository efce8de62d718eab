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

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.backend.nccl.NcclOps.Reduction;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

import java.lang.ref.Reference;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * One non-blocking NCCL communicator on one GPU, with the CUDA stream its collectives run on and
 * the ordering of that stream against the caller's (DJL's legacy default stream).
 *
 * <p>NCCL calls on one communicator must not overlap, so every call here holds the communicator's
 * lock; since the communicator is non-blocking, no call holds it for long: a call that answers
 * {@code ncclInProgress} is polled against the deadline it was given. Thread-safe. Owns the
 * communicator, the stream, a scratch float on the device (for barriers) and a retained primary
 * context; {@link #close} finalizes and frees them, {@link #abort} aborts.
 */
final class NcclCommunicator implements AutoCloseable {

    /** {@code CU_STREAM_LEGACY}: the legacy default stream, on which DJL's work runs. */
    static final Pointer LEGACY_STREAM = new Pointer(1);

    private final NcclLibrary nccl;
    private final CudaDriver cu;
    private final int ordinal;
    private final int device;
    private final Pointer context;
    private final Pointer stream;
    private final long scratch;
    private final int rank;
    private final int size;
    private final ReentrantLock lock = new ReentrantLock();
    private Pointer comm; // guarded by lock; null once aborted or closed
    private volatile boolean aborting; // set when an abort is asked for, before ncclCommAbort
    private volatile boolean aborted; // set once ncclCommAbort of comm has returned
    private volatile boolean finalized; // set once ncclCommFinalize and Destroy have succeeded
    private boolean freed; // guarded by lock: the stream, scratch and context are gone
    private final CudaEvents events;

    private NcclCommunicator(
            NcclLibrary nccl,
            CudaDriver cu,
            int ordinal,
            int device,
            Pointer context,
            Pointer stream,
            long scratch,
            Pointer comm,
            int rank,
            int size) {
        this.nccl = nccl;
        this.cu = cu;
        this.events = new CudaEvents(cu);
        this.ordinal = ordinal;
        this.device = device;
        this.context = context;
        this.stream = stream;
        this.scratch = scratch;
        this.comm = comm;
        this.rank = rank;
        this.size = size;
    }

    /**
     * Creates this rank's communicator on a GPU. Blocks until every rank has joined, or fails at
     * the deadline (aborting what was begun, so nothing is left waiting).
     *
     * @param runtime the driver and NCCL
     * @param ordinal the GPU's ordinal (DJL's device id)
     * @param rank this rank
     * @param size the group's size
     * @param uniqueId rank 0's unique id, got through the store: called after the stream exists
     * @param timeout the bound of the whole creation
     * @return the communicator
     * @throws DistributedException naming the failed call, NCCL's text and its last error
     */
    static NcclCommunicator create(
            NcclRuntime runtime,
            int ordinal,
            int rank,
            int size,
            Supplier<byte[]> uniqueId,
            Duration timeout) {
        NcclLibrary nccl = runtime.nccl().library();
        return create(
                runtime,
                ordinal,
                rank,
                size,
                (out, config) -> {
                    NcclUniqueId id = NcclUniqueId.of(uniqueId.get());
                    return nccl.ncclCommInitRankConfig(out, size, id.byValue(), rank, config);
                },
                "ncclCommInitRankConfig",
                timeout);
    }

    /** Makes the native communicator, given the configuration (non-blocking). */
    @FunctionalInterface
    interface CommInit {
        /**
         * Starts making the communicator.
         *
         * @param out receives it
         * @param config its configuration
         * @return NCCL's result ({@code ncclInProgress} while it is being made)
         */
        int init(PointerByReference out, NcclConfig config);
    }

    private static NcclCommunicator create(
            NcclRuntime runtime,
            int ordinal,
            int rank,
            int size,
            CommInit init,
            String call,
            Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        CudaDriver cu = runtime.driver();
        NcclLibrary nccl = runtime.nccl().library();
        if (ordinal < 0 || ordinal >= runtime.gpus()) {
            throw new IllegalArgumentException(
                    "GPU "
                            + ordinal
                            + " (expected: 0 <= id < "
                            + runtime.gpus()
                            + ", the GPUs the driver sees)");
        }
        IntByReference dev = new IntByReference();
        cuda(cu, cu.cuDeviceGet(dev, ordinal), "cuDeviceGet(" + ordinal + ")");
        int device = dev.getValue();
        PointerByReference ctx = new PointerByReference();
        cuda(cu, cu.cuDevicePrimaryCtxRetain(ctx, device), "cuDevicePrimaryCtxRetain");
        Pointer stream = null;
        long scratch = 0;
        NcclCommunicator made = null;
        PointerByReference c = new PointerByReference();
        try {
            cuda(cu, cu.cuCtxSetCurrent(ctx.getValue()), "cuCtxSetCurrent");
            PointerByReference s = new PointerByReference();
            cuda(cu, cu.cuStreamCreate(s, CudaDriver.STREAM_NON_BLOCKING), "cuStreamCreate");
            stream = s.getValue();
            LongByReference mem = new LongByReference();
            cuda(cu, cu.cuMemAlloc_v2(mem, Float.BYTES), "cuMemAlloc");
            scratch = mem.getValue();
            int r = init.init(c, NcclConfig.nonBlocking());
            if (r != NcclResult.SUCCESS.code() && r != NcclResult.IN_PROGRESS.code()) {
                throw new DistributedException(failure(nccl, c.getValue(), r, call, rank, size));
            }
            made =
                    new NcclCommunicator(
                            nccl,
                            cu,
                            ordinal,
                            device,
                            ctx.getValue(),
                            stream,
                            scratch,
                            c.getValue(),
                            rank,
                            size);
            made.settle(r, call, deadline, timeout);
            return made;
        } catch (RuntimeException e) {
            if (made != null) {
                // The abort first: no rank is left waiting on this one.
                cleanUp(e, made::abort, made::free);
                // NCCL's init thread writes *newcomm when it ends, failed or not; the abort joined
                // it, so c's native memory may go only now.
                Reference.reachabilityFence(c);
            } else {
                long mem = scratch;
                Pointer s = stream;
                cleanUp(
                        e,
                        () -> {
                            if (mem != 0) {
                                cu.cuMemFree_v2(mem);
                            }
                        },
                        () -> {
                            if (s != null) {
                                cu.cuStreamDestroy_v2(s);
                            }
                        },
                        () -> cu.cuDevicePrimaryCtxRelease_v2(device));
            }
            throw e;
        }
    }

    /**
     * Runs the steps that undo a failed creation, every one of them even when one fails; their
     * failures are added to the cause as suppressed, so that the reason the creation failed is the
     * one thrown.
     *
     * @param cause why the creation failed
     * @param steps the cleanup, in order
     */
    static void cleanUp(Throwable cause, Runnable... steps) {
        for (Runnable step : steps) {
            try {
                step.run();
            } catch (RuntimeException e) {
                if (e != cause) {
                    cause.addSuppressed(e);
                }
            }
        }
    }

    /**
     * Makes the primary context current on the calling thread (needed on every thread that calls
     * CUDA or NCCL; cheap when already current).
     */
    void makeCurrent() {
        cuda(cu, cu.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    }

    int rank() {
        return rank;
    }

    int size() {
        return size;
    }

    long scratch() {
        return scratch;
    }

    CudaDriver driver() {
        return cu;
    }

    /**
     * The events of this communicator's collectives.
     *
     * @return the pool
     */
    CudaEvents events() {
        return events;
    }

    /**
     * Issues a plan as one NCCL group, ordered after the work already on the caller's stream:
     * {@code start} is recorded there and waited on by the backend's stream, the plan runs there,
     * and {@code end} is recorded after it. Returns once the calls are enqueued, not run. The
     * caller has made the context current (it made the events there).
     *
     * @param plan the calls
     * @param start an event, recorded on the caller's stream
     * @param end an event, recorded on the backend's stream after the plan
     * @param what the collective, for messages
     * @param timeout the bound of a call that answers {@code ncclInProgress}
     * @throws DistributedException if a call fails; the communicator is then unusable
     */
    void issue(List<NcclCall> plan, Pointer start, Pointer end, String what, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            Pointer c = open(what);
            cuda(cu, cu.cuEventRecord(start, LEGACY_STREAM), "cuEventRecord");
            cuda(cu, cu.cuStreamWaitEvent(stream, start, 0), "cuStreamWaitEvent");
            List<Integer> premul = new ArrayList<>(0);
            boolean grouped = plan.size() > 1;
            boolean open = false; // a group started and not yet ended on this thread
            try {
                if (grouped) {
                    check(nccl.ncclGroupStart(), "ncclGroupStart", what);
                    open = true;
                }
                for (NcclCall call : plan) {
                    int r = call.enqueue(nccl, c, stream, red -> op(red, c, premul));
                    if (!grouped) {
                        settle(r, call.nativeName() + " of " + what, deadline, timeout);
                    } else {
                        check(r, call.nativeName(), what);
                    }
                }
                if (grouped) {
                    open = false;
                    settle(nccl.ncclGroupEnd(), "ncclGroupEnd of " + what, deadline, timeout);
                }
            } finally {
                if (open) {
                    // NCCL's group depth is per thread: left open, every later call on this
                    // thread would only be queued, and never run.
                    nccl.ncclGroupEnd();
                }
                // An operator may go once the last call naming it has returned.
                for (int op : premul) {
                    nccl.ncclRedOpDestroy(op, c);
                }
            }
            cuda(cu, cu.cuEventRecord(end, stream), "cuEventRecord");
        } finally {
            lock.unlock();
        }
    }

    /** NCCL's operator for a reduction; a PREMUL_SUM operator is made for this call. */
    private int op(Reduction r, Pointer c, List<Integer> premul) {
        if (r.op() != null) {
            return r.op().code();
        }
        byte[] scalar = r.scalar();
        Memory host = new Memory(scalar.length);
        host.write(0, scalar, 0, scalar.length);
        IntByReference op = new IntByReference();
        // Host-immediate: NCCL copies the scalar's bytes (as wide as the type) during this call.
        check(
                nccl.ncclRedOpCreatePreMulSum(
                        op, host, r.type().code(), NcclLibrary.SCALAR_HOST_IMMEDIATE, c),
                "ncclRedOpCreatePreMulSum",
                "PREMUL_SUM");
        premul.add(op.getValue());
        return op.getValue();
    }

    /**
     * Splits a sub-group's communicator off this one ({@code ncclCommSplit}), on this one's GPU.
     * Collective over this communicator: every rank calls it, or {@link #splitOff} on the ranks
     * outside the sub-group. Blocks until the new communicator is ready, up to the timeout.
     *
     * @param runtime the driver and NCCL
     * @param color the sub-group's colour, the same on its members, at least 0
     * @param key this rank's rank in the sub-group
     * @param size the sub-group's size
     * @param timeout the bound
     * @return the sub-group's communicator
     */
    NcclCommunicator split(NcclRuntime runtime, int color, int key, int size, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            Pointer c = open("newGroup");
            return create(
                    runtime,
                    ordinal,
                    key,
                    size,
                    (out, config) -> {
                        // On a non-blocking parent NCCL sets *newcomm later, from its own thread,
                        // and the split's progress is the parent's: wait on the parent, then read
                        // the child (out stays referenced until then).
                        int r = nccl.ncclCommSplit(c, color, key, out, config);
                        settleSplit(r, "ncclCommSplit", out, deadline, timeout);
                        if (out.getValue() == null) {
                            throw new DistributedException(
                                    "ncclCommSplit(color "
                                            + color
                                            + ") made no communicator (rank "
                                            + rank
                                            + " of "
                                            + this.size
                                            + ")");
                        }
                        return NcclResult.SUCCESS.code();
                    },
                    "ncclCommSplit",
                    timeout);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Takes part in a split that leaves this rank out ({@code NCCL_SPLIT_NOCOLOR}). Blocks until
     * NCCL has finished with this communicator's part, up to the timeout.
     *
     * @param timeout the bound
     */
    void splitOff(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            Pointer c = open("newGroup");
            makeCurrent();
            PointerByReference none = new PointerByReference();
            int r =
                    nccl.ncclCommSplit(
                            c, NcclLibrary.SPLIT_NOCOLOR, rank, none, NcclConfig.nonBlocking());
            settleSplit(r, "ncclCommSplit(NCCL_SPLIT_NOCOLOR)", none, deadline, timeout);
            if (none.getValue() != null) {
                throw new DistributedException(
                        "ncclCommSplit(NCCL_SPLIT_NOCOLOR) made a communicator (expected: none)");
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits out a split on this (the parent) communicator. NCCL's split thread writes {@code
     * *newcomm} when it ends, whether the split succeeded or not ({@code ncclCommInitRankFunc}'s
     * exit), and a child written after a failure is the caller's to free. So a split that fails, or
     * is still running at the deadline, aborts the parent here, which stops that thread and joins
     * it, while {@code out} is still referenced (its native memory is what NCCL writes), and aborts
     * the child it left. Holds the lock; the context is current.
     *
     * @throws DistributedException on an error, or at the deadline
     */
    private void settleSplit(
            int result, String call, PointerByReference out, long deadline, Duration timeout) {
        try {
            settle(result, call, deadline, timeout);
        } catch (RuntimeException e) {
            if (comm != null) {
                abortHeld();
            }
            Pointer orphan = out.getValue();
            if (orphan != null) {
                nccl.ncclCommAbort(orphan);
            }
            throw e;
        } finally {
            Reference.reachabilityFence(out);
        }
    }

    /**
     * The communicator's asynchronous error: {@code ncclSuccess}, {@code ncclInProgress} (also
     * while another thread is inside a call on it) or the error that broke it. Does not block.
     *
     * @return the result code, or -1 once the communicator is gone
     */
    int asyncError() {
        // A thread inside a call on this communicator is polling the same state, bounded by its
        // own deadline: the watchdog does not wait for it.
        if (!lock.tryLock()) {
            return NcclResult.IN_PROGRESS.code();
        }
        try {
            if (comm == null) {
                return -1;
            }
            IntByReference e = new IntByReference();
            int r = nccl.ncclCommGetAsyncError(comm, e);
            return r != NcclResult.SUCCESS.code() ? r : e.getValue();
        } finally {
            lock.unlock();
        }
    }

    /**
     * NCCL's text for a result and this communicator's last error.
     *
     * @param result an NCCL result code
     * @return the text
     */
    String describe(int result) {
        lock.lock();
        try {
            return describe(nccl, comm, result);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Aborts the communicator: its kernels stop, its resources go, and every later call fails.
     * Returns once {@code ncclCommAbort} has returned, whichever thread called it. Idempotent; the
     * stream and context are freed by {@link #close}.
     */
    void abort() {
        // The abort waits for the lock rather than calling ncclCommAbort beside a thread that holds
        // it: NCCL calls on one communicator must not overlap, and that thread's next call (the
        // ncclCommGetAsyncError of settle's polling) would use a communicator the abort frees.
        // Nor does it wait out that thread's deadline (a whole group timeout for a collective
        // held up by a slow peer): the flag makes settle give up at its next poll, within a
        // millisecond, and a call not yet begun is refused by open(); every other call holding
        // the lock returns at once, the communicator being non-blocking.
        if (finalized) {
            return; // every collective completed: none may be failed by a flag set now
        }
        aborting = true;
        lock.lock();
        try {
            if (comm != null) {
                try {
                    makeCurrent();
                } catch (RuntimeException e) {
                    // NCCL's abort sets its own device: a context that cannot be made current (a
                    // driver going away) must not keep the communicator and its threads alive
                }
                abortHeld();
            } else if (!aborted) {
                aborting = false; // finalized before: nothing was aborted, every work stands
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether an abort of the communicator has begun (it may not have run yet). NCCL's abort makes
     * the running kernels exit and the stream move on, so the end event of a collective cut short
     * completes without an error: from the moment this is true, an end event seen complete proves
     * nothing. It is set before {@code ncclCommAbort} is called.
     *
     * @return whether an abort was asked for
     */
    boolean aborting() {
        return aborting;
    }

    /**
     * Whether the communicator was aborted: {@code ncclCommAbort} has returned, its kernels no
     * longer run, and no pending collective may count as done.
     *
     * @return whether it was aborted
     */
    boolean aborted() {
        return aborted;
    }

    /** Aborts the communicator, marked aborting first. Holds the lock; comm is not null. */
    private void abortHeld() {
        aborting = true;
        nccl.ncclCommAbort(comm);
        comm = null;
        aborted = true;
    }

    /**
     * Finalizes the communicator (its pending operations complete), bounded by the timeout; on a
     * failure or at the deadline it is aborted instead. Idempotent.
     *
     * @param timeout the bound of finalizing
     */
    void finalizeOrAbort(Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        lock.lock();
        try {
            if (comm != null) {
                RuntimeException noContext = null;
                try {
                    makeCurrent();
                } catch (RuntimeException e) {
                    noContext = e;
                }
                if (noContext == null) {
                    try {
                        settle(nccl.ncclCommFinalize(comm), "ncclCommFinalize", deadline, timeout);
                        nccl.ncclCommDestroy(comm);
                        finalized = true;
                    } catch (RuntimeException e) {
                        abortHeld();
                    }
                } else {
                    abortHeld(); // sets its own device; finalizing needs the context
                }
                comm = null;
                if (noContext != null) {
                    throw noContext;
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Frees the stream, the scratch buffer and the context, after {@link #finalizeOrAbort} (or
     * {@link #abort}). Idempotent.
     */
    void free() {
        lock.lock();
        try {
            if (comm == null && !freed) {
                freed = true;
                try {
                    makeCurrent();
                    events.close();
                    cu.cuMemFree_v2(scratch);
                    cu.cuStreamDestroy_v2(stream);
                } finally {
                    // the primary context's reference goes back even when it could not be made
                    // current (its memory and stream go with it once no one holds it)
                    cu.cuDevicePrimaryCtxRelease_v2(device);
                }
            }
        } finally {
            lock.unlock();
        }
    }

    /** Finalizes (bounded by 30 s, then aborts) and frees. */
    @Override
    public void close() {
        finalizeOrAbort(Duration.ofSeconds(30));
        free();
    }

    @Override
    public String toString() {
        return "NCCL communicator, rank " + rank + " of " + size + " on GPU " + ordinal;
    }

    /**
     * Waits out {@code ncclInProgress}, polling the communicator's state, up to the deadline.
     *
     * @throws DistributedException on an error, or at the deadline
     */
    private void settle(int result, String call, long deadline, Duration timeout) {
        int r = result;
        int polls = 0;
        while (r == NcclResult.IN_PROGRESS.code()) {
            if (aborting) {
                // Another thread waits for the lock to abort (see abort()).
                throw new DistributedException(
                        call + " was cut short: " + this + " is being aborted");
            }
            if (System.nanoTime() - deadline > 0) {
                throw new DistributedException(
                        call
                                + " did not finish within "
                                + timeout
                                + " (rank "
                                + rank
                                + " of "
                                + size
                                + "; a rank that never joined, or one that is stuck, holds it)");
            }
            // Spin briefly (connection set-up is the slow case), then back off.
            if (++polls > 100) {
                LockSupport.parkNanos(polls > 10_000 ? 1_000_000 : 20_000);
            }
            IntByReference e = new IntByReference();
            int q = nccl.ncclCommGetAsyncError(comm, e);
            r = q != NcclResult.SUCCESS.code() ? q : e.getValue();
        }
        check(r, call, null);
    }

    private Pointer open(String what) {
        if (comm == null || aborting) {
            throw new DistributedException(
                    what + ": the NCCL communicator was aborted or closed (" + this + ")");
        }
        return comm;
    }

    private void check(int result, String call, String what) {
        if (result != NcclResult.SUCCESS.code()) {
            throw new DistributedException(
                    (what == null ? "" : what + ": ")
                            + failure(nccl, comm, result, call, rank, size));
        }
    }

    private static String failure(
            NcclLibrary nccl, Pointer comm, int result, String call, int rank, int size) {
        return call
                + " -> "
                + describe(nccl, comm, result)
                + " (rank "
                + rank
                + " of "
                + size
                + ")";
    }

    private static String describe(NcclLibrary nccl, Pointer comm, int result) {
        String name;
        try {
            name = NcclResult.of(result).nativeName();
        } catch (IllegalArgumentException e) {
            name = "NCCL result " + result;
        }
        String text = nccl.ncclGetErrorString(result);
        String last = comm != null ? nccl.ncclGetLastError(comm) : nccl.ncclGetLastError(null);
        return name
                + (text != null ? " (" + text + ")" : "")
                + (last != null && !last.isEmpty() ? "; last error: " + last : "");
    }

    private static void cuda(CudaDriver cu, int result, String call) {
        if (result != CudaResult.SUCCESS.code()) {
            throw new DistributedException(call + " -> " + NcclRuntime.describe(cu, result));
        }
    }
}
