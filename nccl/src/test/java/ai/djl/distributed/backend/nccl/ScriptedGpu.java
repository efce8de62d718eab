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
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.nccl.CudaCompatibility.CudaVersion;
import ai.djl.distributed.store.HashStore;
import ai.djl.ndarray.types.DataType;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A scripted stand-in for the CUDA driver and NCCL that records every call, so that the backend's
 * control logic (ordering on streams, the communicator's life, the watchdog) is checked where no
 * GPU is. It computes nothing: what the calls do to data is checked by {@link NcclPlansTest} and,
 * on a GPU, by {@link NcclBackendGpuTest}. The expected call sequences in the tests come from how
 * PyTorch orders NCCL work ({@code nccl-facts.md} §4, §5), not from this code.
 *
 * <p>Handles are small numbers: the caller's stream is {@code CU_STREAM_LEGACY} (1), the backend's
 * stream 0x500, events 0x1001 on, the communicator 0x700.
 *
 * <p>As NCCL's, {@code ncclCommAbort} makes the kernels on the backend's stream exit: the stream
 * moves on and every event recorded there so far completes, without an error.
 */
final class ScriptedGpu {

    static final long STREAM = 0x500;
    static final long COMM = 0x700;

    final List<String> log = new ArrayList<>();
    final Set<Long> completed = ConcurrentHashMap.newKeySet();
    volatile boolean eventsComplete = true;
    volatile int eventError; // when not 0, what cuEventQuery answers (a CUDA error)
    volatile int initPolls; // async-error polls answering ncclInProgress after init
    volatile int asyncError; // what ncclCommGetAsyncError reports once init is done
    volatile int splitOutcome; // becomes asyncError when ncclCommSplit is called (0: none)
    volatile int ctxError; // when not 0, what cuCtxSetCurrent answers (a CUDA error)
    volatile String lastError = "";
    volatile long failingCount = -1; // an ncclAllReduce of this count answers ncclInvalidArgument
    volatile Runnable duringAbort; // runs inside ncclCommAbort, once its kernels have exited
    volatile Error asyncErrorThrows; // thrown once by the next ncclCommGetAsyncError
    private final Set<Long> onStream = ConcurrentHashMap.newKeySet(); // recorded on STREAM
    private PointerByReference pendingSplit; // guarded by this: set when the parent is polled
    private final ThreadLocal<Pointer> current = new ThreadLocal<>();
    private long nextEvent = 0x1001;
    final CudaDriver cuda;
    final NcclLibrary nccl;

    ScriptedGpu() {
        Map<String, Function<Object[], Object>> cu = new HashMap<>();
        cu.put("cuDeviceGet", a -> set((IntByReference) a[0], (Integer) a[1]));
        cu.put(
                "cuDevicePrimaryCtxRetain",
                a -> {
                    ((PointerByReference) a[0]).setValue(new Pointer(0x600));
                    return log("cuDevicePrimaryCtxRetain");
                });
        cu.put("cuDevicePrimaryCtxRelease_v2", a -> log("cuDevicePrimaryCtxRelease"));
        cu.put(
                "cuCtxSetCurrent",
                a -> {
                    if (ctxError != 0) {
                        return ctxError;
                    }
                    current.set((Pointer) a[0]);
                    return 0;
                });
        cu.put(
                "cuStreamCreate",
                a -> {
                    ((PointerByReference) a[0]).setValue(new Pointer(STREAM));
                    return log("cuStreamCreate(flags " + a[1] + ")");
                });
        cu.put("cuStreamDestroy_v2", a -> log("cuStreamDestroy(" + h(a[0]) + ")"));
        cu.put(
                "cuMemAlloc_v2",
                a -> {
                    ((LongByReference) a[0]).setValue(0x9000);
                    return log("cuMemAlloc(" + a[1] + ")");
                });
        cu.put("cuMemFree_v2", a -> log("cuMemFree(" + Long.toHexString((Long) a[0]) + ")"));
        cu.put(
                "cuEventCreate",
                a -> {
                    if (current.get() == null) {
                        return CudaResult.INVALID_CONTEXT.code(); // as the driver, off-context
                    }
                    long e;
                    synchronized (this) {
                        e = nextEvent++;
                    }
                    ((PointerByReference) a[0]).setValue(new Pointer(e));
                    return 0;
                });
        cu.put(
                "cuEventRecord",
                a -> {
                    long e = Pointer.nativeValue((Pointer) a[0]);
                    completed.remove(e); // recorded again: pending until the stream reaches it
                    if (Pointer.nativeValue((Pointer) a[1]) == STREAM) {
                        onStream.add(e);
                    } else {
                        onStream.remove(e);
                    }
                    return log("cuEventRecord(" + h(a[0]) + " on " + h(a[1]) + ")");
                });
        cu.put(
                "cuStreamWaitEvent",
                a -> log("cuStreamWaitEvent(" + h(a[0]) + " waits " + h(a[1]) + ")"));
        cu.put(
                "cuEventQuery",
                a ->
                        eventError != 0
                                ? eventError
                                : eventsComplete
                                                || completed.contains(
                                                        Pointer.nativeValue((Pointer) a[0]))
                                        ? 0
                                        : CudaResult.NOT_READY.code());
        cu.put("cuEventDestroy_v2", a -> log("cuEventDestroy(" + h(a[0]) + ")"));
        cu.put("cuGetErrorName", a -> 1);
        cu.put("cuGetErrorString", a -> 1);
        cuda = NativeFakes.of(CudaDriver.class, cu);

        Map<String, Function<Object[], Object>> n = new HashMap<>();
        n.put(
                "ncclGetUniqueId",
                a -> {
                    NcclUniqueId id = (NcclUniqueId) a[0];
                    for (int i = 0; i < NcclUniqueId.BYTES; i++) {
                        id.internal[i] = (byte) (i * 7 + 1);
                    }
                    id.write(); // as the native call would leave it: in the struct's memory
                    return log("ncclGetUniqueId");
                });
        n.put(
                "ncclCommInitRankConfig",
                a -> {
                    ((PointerByReference) a[0]).setValue(new Pointer(COMM));
                    NcclConfig config = (NcclConfig) a[4];
                    log(
                            "ncclCommInitRankConfig(nranks "
                                    + a[1]
                                    + ", rank "
                                    + a[3]
                                    + ", blocking "
                                    + config.blocking
                                    + ", id[0..2] "
                                    + ((NcclUniqueId) a[2]).internal[0]
                                    + ","
                                    + ((NcclUniqueId) a[2]).internal[1]
                                    + ")");
                    return initPolls > 0 ? NcclResult.IN_PROGRESS.code() : 0;
                });
        n.put(
                "ncclCommGetAsyncError",
                a -> {
                    Error thrown = asyncErrorThrows;
                    if (thrown != null) {
                        asyncErrorThrows = null;
                        throw thrown;
                    }
                    int e;
                    synchronized (this) {
                        if (initPolls > 0) {
                            initPolls--;
                            e = NcclResult.IN_PROGRESS.code();
                        } else {
                            e = asyncError;
                            if (pendingSplit != null) {
                                pendingSplit.setValue(new Pointer(COMM + 1));
                                pendingSplit = null;
                            }
                        }
                    }
                    ((IntByReference) a[1]).setValue(e);
                    return 0;
                });
        n.put(
                "ncclCommSplit",
                a -> {
                    // As NCCL on a non-blocking parent: *newcomm is NULL now, set later; the
                    // parent reports the progress.
                    int color = (Integer) a[1];
                    PointerByReference out = (PointerByReference) a[3];
                    out.setValue(null);
                    synchronized (this) {
                        pendingSplit = color < 0 ? null : out;
                        initPolls = Math.max(initPolls, 2);
                        if (splitOutcome != 0) {
                            // set only now: before the split, the watchdog would find it on the
                            // parent and abort it first
                            asyncError = splitOutcome;
                        }
                    }
                    log("ncclCommSplit(color " + color + ", key " + a[2] + ")");
                    return NcclResult.IN_PROGRESS.code();
                });
        n.put(
                "ncclCommAbort",
                a -> {
                    long c = Pointer.nativeValue((Pointer) a[0]);
                    synchronized (this) {
                        // As NCCL: aborting the parent joins a split still running, whose thread
                        // writes the (failed) child to *newcomm as it ends.
                        if (c == COMM && pendingSplit != null) {
                            pendingSplit.setValue(new Pointer(COMM + 1));
                            pendingSplit = null;
                        }
                    }
                    log(c == COMM ? "ncclCommAbort" : "ncclCommAbort(" + h(a[0]) + ")");
                    // As NCCL: the aborted kernels exit, so the stream's events complete.
                    completed.addAll(onStream);
                    Runnable during = duringAbort;
                    if (during != null) {
                        during.run();
                    }
                    return 0;
                });
        // While initPolls lasts (a peer that is gone), finalizing stays in progress.
        n.put(
                "ncclCommFinalize",
                a -> {
                    log("ncclCommFinalize");
                    return initPolls > 0 ? NcclResult.IN_PROGRESS.code() : 0;
                });
        n.put("ncclCommDestroy", a -> log("ncclCommDestroy"));
        n.put("ncclGetErrorString", a -> "text of " + a[0]);
        n.put("ncclGetLastError", a -> lastError);
        n.put("ncclGroupStart", a -> log("ncclGroupStart"));
        n.put("ncclGroupEnd", a -> log("ncclGroupEnd"));
        n.put(
                "ncclAllReduce",
                a -> {
                    log(
                            "ncclAllReduce(count "
                                    + a[2]
                                    + ", type "
                                    + a[3]
                                    + ", op "
                                    + a[4]
                                    + ", on "
                                    + h(a[6])
                                    + ")");
                    return (Long) a[2] == failingCount ? NcclResult.INVALID_ARGUMENT.code() : 0;
                });
        n.put(
                "ncclBroadcast",
                a ->
                        log(
                                "ncclBroadcast(count "
                                        + a[2]
                                        + ", root "
                                        + a[4]
                                        + ", on "
                                        + h(a[6])
                                        + ")"));
        n.put(
                "ncclRedOpCreatePreMulSum",
                a -> {
                    Pointer scalar = (Pointer) a[1];
                    int type = (Integer) a[2];
                    int width = type == NcclDataType.FLOAT16.code() ? 2 : 4;
                    StringBuilder hex = new StringBuilder();
                    for (int i = width - 1; i >= 0; i--) {
                        hex.append(String.format("%02x", scalar.getByte(i)));
                    }
                    ((IntByReference) a[0]).setValue(1000);
                    return log(
                            "ncclRedOpCreatePreMulSum(0x"
                                    + hex
                                    + ", type "
                                    + type
                                    + ", residence "
                                    + a[3]
                                    + ")");
                });
        n.put("ncclRedOpDestroy", a -> log("ncclRedOpDestroy(" + a[0] + ")"));
        nccl = NativeFakes.of(NcclLibrary.class, n);
    }

    NcclRuntime runtime() {
        return runtime((m, a) -> null, (m, a) -> null);
    }

    /** Runs before a call of the scripted driver or NCCL: may block, or answer instead. */
    @FunctionalInterface
    interface Hook {
        /**
         * Sees a call first.
         *
         * @param method the native function's name
         * @param args its arguments
         * @return its answer instead of the script's, or null for the script's
         * @throws Exception to fail the test's thread
         */
        Object before(String method, Object[] args) throws Exception;
    }

    /** This GPU's runtime, each call seen first by a hook. */
    NcclRuntime runtime(Hook cudaHook, Hook ncclHook) {
        return new NcclRuntime(
                hooked(CudaDriver.class, cuda, cudaHook),
                new CudaVersion(13, 0),
                1,
                new NcclLocator.Found(
                        hooked(NcclLibrary.class, nccl, ncclHook),
                        "/scripted/libnccl.so.2",
                        new NcclVersion(2, 28, 9),
                        "test"));
    }

    private static <T> T hooked(Class<T> type, T script, Hook hook) {
        return type.cast(
                Proxy.newProxyInstance(
                        type.getClassLoader(),
                        new Class<?>[] {type},
                        (self, method, args) -> {
                            Object answer = hook.before(method.getName(), args);
                            if (answer != null) {
                                return answer;
                            }
                            try {
                                return method.invoke(script, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        }));
    }

    /** The context of a group on GPUs, over a store of its own. */
    static BackendContext context(int rank, int size, Duration timeout) {
        return new BackendContext(new HashStore(), rank, size, Device.Type.GPU, timeout, Map.of());
    }

    /** A float32 vector of n elements at an address on GPU 0. */
    static TensorView view(long address, long n) {
        return new TensorView(
                address,
                Device.Type.GPU,
                0,
                DataType.FLOAT32,
                0,
                n,
                0,
                new long[] {n},
                new long[] {1});
    }

    /** An all-reduce (SUM) of one array, as rank 0 of a group of the given size. */
    static Work sum(NcclBackend b, TensorView v, int size) {
        NcclPlans plans = new NcclPlans(0, size);
        return b.runOn(
                "allReduce",
                Device.gpu(0),
                List.of(v),
                l -> plans.allReduce(l, ReduceOp.SUM),
                List.of(v),
                false);
    }

    synchronized List<String> log() {
        return List.copyOf(log);
    }

    synchronized int log(String call) {
        log.add(call);
        return 0;
    }

    private static int set(IntByReference ref, int value) {
        ref.setValue(value);
        return 0;
    }

    private static String h(Object pointer) {
        long v = Pointer.nativeValue((Pointer) pointer);
        return v == 1 ? "legacy" : v == STREAM ? "stream" : "0x" + Long.toHexString(v);
    }
}
