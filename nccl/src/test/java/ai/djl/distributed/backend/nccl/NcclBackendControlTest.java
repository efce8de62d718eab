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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.store.HashStore;
import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The backend's control logic over a {@link ScriptedGpu}: the order of its calls on the streams,
 * the communicator's creation through the store and its end, and the watchdog. The expected
 * sequences are PyTorch's ({@code ProcessGroupNCCL}): an event on the caller's stream that the NCCL
 * stream waits for, the collective on the NCCL stream, an end event after it, and {@code wait()}
 * making the caller's stream wait for that end event.
 */
@Timeout(60)
class NcclBackendControlTest {

    private final ScriptedGpu gpu = new ScriptedGpu();
    private final HashStore store = new HashStore();

    private NcclBackend backend(int rank, int size, Duration timeout) {
        return backend(rank, size, timeout, Map.of());
    }

    private NcclBackend backend(int rank, int size, Duration timeout, Map<String, String> options) {
        return (NcclBackend)
                new NcclBackendProvider(gpu::runtime)
                        .create(
                                new BackendContext(
                                        store, rank, size, Device.Type.GPU, timeout, options));
    }

    private static TensorView view(DataType type, long address, long n) {
        return new TensorView(
                address, Device.Type.GPU, 0, type, 0, n, 0, new long[] {n}, new long[] {1});
    }

    private static Work sum(NcclBackend b, TensorView v, ReduceOp op) {
        NcclPlans plans = new NcclPlans(0, 1);
        return b.runOn(
                "allReduce",
                Device.gpu(0),
                List.of(v),
                l -> plans.allReduce(l, op),
                List.of(v),
                false);
    }

    @Test
    void aCollectiveIsOrderedBetweenTheCallersStreamAndItsWait() {
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(10))) {
            Work w = sum(b, view(DataType.FLOAT32, 0x10000, 256), ReduceOp.SUM);
            w.waitFor();
            List<String> log = gpu.log();
            int start =
                    log.indexOf(
                            "ncclCommInitRankConfig(nranks 1, rank 0, blocking 0, id[0..2] 1,8)");
            assertTrue(start >= 0, log.toString());
            assertEquals(
                    List.of(
                            "cuEventRecord(0x1001 on legacy)",
                            "cuStreamWaitEvent(stream waits 0x1001)",
                            "ncclAllReduce(count 256, type 7, op 0, on stream)",
                            "cuEventRecord(0x1002 on stream)",
                            "cuStreamWaitEvent(legacy waits 0x1002)"),
                    log.subList(start + 1, log.size()),
                    log.toString());
            assertCompletesSoon(w);
            // The next collective reuses the two completed events rather than making new ones.
            sum(b, view(DataType.FLOAT32, 0x10000, 256), ReduceOp.SUM).waitFor();
            List<String> next = gpu.log().subList(log.size(), gpu.log().size());
            assertTrue(
                    next.contains("cuEventRecord(0x1002 on legacy)")
                            && next.contains("cuEventRecord(0x1001 on stream)"),
                    next.toString());
            assertTrue(
                    gpu.log().stream().noneMatch(c -> c.contains("0x1003")), gpu.log().toString());
        }
    }

    @Test
    void theUniqueIdIsRankZerosUnderPyTorchsFirstKeyAndInitIsPolled() {
        gpu.initPolls = 5;
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(10))) {
            sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM).waitFor();
            byte[] expected = new byte[NcclUniqueId.BYTES];
            for (int i = 0; i < expected.length; i++) {
                expected[i] = (byte) (i * 7 + 1);
            }
            assertArrayEquals(expected, store.get("0"));
            assertEquals(0, gpu.initPolls, "init was polled until done");
            assertTrue(gpu.log().contains("cuStreamCreate(flags 1)"), "a non-blocking stream");
        }
    }

    @Test
    void aRankOtherThanZeroTakesTheIdFromTheStore() {
        byte[] id = new byte[NcclUniqueId.BYTES];
        id[0] = 42;
        id[1] = 43;
        store.set("0", id);
        try (NcclBackend b = backend(1, 2, Duration.ofSeconds(10))) {
            NcclPlans plans = new NcclPlans(1, 2);
            broadcast(b, plans);
            assertFalse(gpu.log().contains("ncclGetUniqueId"), gpu.log().toString());
            assertTrue(
                    gpu.log()
                            .contains(
                                    "ncclCommInitRankConfig(nranks 2, rank 1, blocking 0, id[0..2] 42,43)"),
                    gpu.log().toString());
        }
    }

    @Test
    void aPeerThatNeverJoinsFailsAtTheDeadlineAndNothingIsLeft() {
        gpu.initPolls = Integer.MAX_VALUE;
        try (NcclBackend b = backend(0, 2, Duration.ofMillis(500))) {
            long t0 = System.nanoTime();
            DistributedException e =
                    assertThrows(
                            DistributedException.class,
                            () -> sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM));
            assertTrue(
                    e.getMessage()
                            .startsWith("ncclCommInitRankConfig did not finish within PT0.5S"),
                    e.getMessage());
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5));
            List<String> log = gpu.log();
            assertTrue(
                    log.containsAll(
                            List.of(
                                    "ncclCommAbort",
                                    "cuMemFree(9000)",
                                    "cuStreamDestroy(stream)",
                                    "cuDevicePrimaryCtxRelease")),
                    log.toString());
        }
    }

    @Test
    void theWatchdogAbortsAWorkPastTheTimeoutAndRefusesLaterOnes() throws Exception {
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(0, 1, Duration.ofMillis(300))) {
            Work w = sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM);
            Throwable failure = failureOf(w);
            assertTrue(
                    failure.getMessage().startsWith("nccl allReduce (rank 0) timed out"),
                    failure.getMessage());
            assertTrue(gpu.log().contains("ncclCommAbort"));
            assertFalse(w.isSuccess());
            DistributedException later =
                    assertThrows(
                            DistributedException.class,
                            () -> sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM));
            assertTrue(later.getMessage().contains("aborted earlier"), later.getMessage());
        }
    }

    @Test
    void anAsyncErrorFailsPendingWorkWithNcclsText() throws Exception {
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(30))) {
            Work w = sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM);
            gpu.lastError = "peer 1 closed the connection";
            gpu.asyncError = NcclResult.REMOTE_ERROR.code();
            Throwable failure = failureOf(w);
            String m = failure.getMessage();
            assertTrue(
                    m.startsWith("nccl allReduce (rank 0) failed: ncclRemoteError (text of 6)"), m);
            assertTrue(m.contains("last error: peer 1 closed the connection"), m);
            assertTrue(gpu.log().contains("ncclCommAbort"));
        }
    }

    @Test
    void aCudaErrorOfAnEndEventAbortsTheCommunicatorAndFailsLaterWork() throws Exception {
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(30))) {
            Work w = sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM);
            gpu.eventError = CudaResult.ILLEGAL_ADDRESS.code();
            Throwable failure = failureOf(w);
            assertTrue(failure.getMessage().contains("cuEventQuery -> "), failure.getMessage());
            // As PyTorch's watchdog on an exception from a work's query: the communicator goes.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!gpu.log().contains("ncclCommAbort")) {
                assertTrue(System.nanoTime() < until, "not aborted: " + gpu.log());
                Thread.sleep(10);
            }
            gpu.eventError = 0;
            DistributedException later =
                    assertThrows(
                            DistributedException.class,
                            () -> sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM));
            assertTrue(later.getMessage().contains("aborted earlier"), later.getMessage());
            assertTrue(later.getMessage().contains("cuEventQuery"), later.getMessage());
        }
    }

    @Test
    void premulSumPassesItsScalarAtTheTypesWidthAndFreesTheOperator() {
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(10))) {
            sum(b, view(DataType.FLOAT16, 0x10000, 8), ReduceOp.premulSum(2)).waitFor();
            sum(b, view(DataType.FLOAT32, 0x10000, 8), ReduceOp.premulSum(2)).waitFor();
            List<String> log = gpu.log();
            // 2.0 is 0x4000 in IEEE half precision and 0x40000000 in single; 1 = host-immediate.
            int half = log.indexOf("ncclRedOpCreatePreMulSum(0x4000, type 6, residence 1)");
            int single = log.indexOf("ncclRedOpCreatePreMulSum(0x40000000, type 7, residence 1)");
            assertTrue(half >= 0 && single > half, log.toString());
            assertEquals("ncclAllReduce(count 8, type 6, op 1000, on stream)", log.get(half + 1));
            assertEquals("ncclRedOpDestroy(1000)", log.get(half + 2));
        }
    }

    @Test
    void severalCallsGoInOneGroupAndOneCallInNone() {
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(10))) {
            NcclPlans plans = new NcclPlans(0, 1);
            TensorView x = view(DataType.FLOAT32, 0x10000, 4);
            TensorView y = view(DataType.FLOAT32, 0x20000, 4);
            sumBoth(b, x, y);
            List<String> log = gpu.log();
            int s = log.indexOf("ncclGroupStart");
            assertEquals(
                    List.of(
                            "ncclGroupStart",
                            "ncclAllReduce(count 4, type 7, op 0, on stream)",
                            "ncclAllReduce(count 4, type 7, op 0, on stream)",
                            "ncclGroupEnd",
                            "cuEventRecord(0x1002 on stream)"),
                    log.subList(s, s + 5));
            b.runOn(
                    "allReduce",
                    Device.gpu(0),
                    List.of(x),
                    l -> plans.allReduce(l, ReduceOp.SUM),
                    List.of(),
                    false);
            assertEquals(1, gpu.log().stream().filter("ncclGroupStart"::equals).count());
        }
    }

    @Test
    void closeFinalizesThenFreesAndFailsNothingThatCompleted() {
        NcclBackend b = backend(0, 1, Duration.ofSeconds(10));
        Work w = sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM);
        b.close();
        assertTrue(w.isSuccess());
        List<String> log = gpu.log();
        int f = log.indexOf("ncclCommFinalize");
        assertEquals(
                List.of(
                        "ncclCommFinalize",
                        "ncclCommDestroy",
                        "cuMemFree(9000)",
                        "cuStreamDestroy(stream)",
                        "cuDevicePrimaryCtxRelease"),
                log.subList(f, log.size()).stream()
                        .filter(c -> !c.startsWith("cuEventDestroy"))
                        .toList(),
                log.toString());
        DistributedException e =
                assertThrows(
                        DistributedException.class,
                        () -> sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        b.close(); // idempotent
    }

    @Test
    void closeWithoutAUsableContextStillAbortsFailsPendingWorkAndReleases() {
        NcclBackend b = backend(0, 1, Duration.ofSeconds(10));
        gpu.eventsComplete = false; // the work stays pending
        Work w = sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM);
        gpu.ctxError = 201; // CUDA_ERROR_INVALID_CONTEXT: the driver is going away
        DistributedException e = assertThrows(DistributedException.class, b::close);
        assertTrue(e.getMessage().startsWith("cuCtxSetCurrent -> "), e.getMessage());
        List<String> log = gpu.log();
        assertTrue(log.contains("ncclCommAbort"), log.toString());
        assertFalse(log.contains("ncclCommFinalize"), log.toString());
        assertTrue(log.contains("cuDevicePrimaryCtxRelease"), log.toString());
        assertTrue(w.isCompleted() && !w.isSuccess(), "the pending work failed");
    }

    @Test
    void arraysOnAnotherGpuOrTheCpuAreRefused() {
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(10))) {
            sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM);
            NcclPlans plans = new NcclPlans(0, 1);
            IllegalArgumentException other =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    b.runOn(
                                            "allReduce",
                                            Device.gpu(1),
                                            List.of(),
                                            l -> plans.allReduce(l, ReduceOp.SUM),
                                            List.of(),
                                            false));
            assertTrue(
                    other.getMessage()
                            .contains(
                                    "expected: on gpu(0), the GPU of this rank's NCCL communicator"),
                    other.getMessage());
            IllegalArgumentException cpu =
                    assertThrows(
                            IllegalArgumentException.class,
                            () ->
                                    b.runOn(
                                            "allReduce",
                                            Device.cpu(),
                                            List.of(),
                                            l -> plans.allReduce(l, ReduceOp.SUM),
                                            List.of(),
                                            false));
            assertTrue(cpu.getMessage().contains("expected: a GPU array"), cpu.getMessage());
        }
    }

    @Test
    void aSubGroupIsSplitOffAnEagerCommunicator() {
        try (NcclBackend world = backend(0, 2, Duration.ofSeconds(10), Map.of("device", "0"))) {
            assertTrue(gpu.log().contains("ncclGetUniqueId"), "made at creation");
            BackendContext child =
                    new BackendContext(
                            new HashStore(),
                            0,
                            1,
                            Device.Type.GPU,
                            Duration.ofSeconds(10),
                            Map.of());
            try (Backend sub = world.split(new int[] {0}, child).orElseThrow()) {
                assertTrue(
                        gpu.log().contains("ncclCommSplit(color 0, key 0)"), gpu.log().toString());
                assertTrue(sub.toString().contains("rank 0 of 1 on GPU 0"), sub.toString());
                // The split needs no unique id: nothing went through the child's store.
                assertEquals(1, gpu.log().stream().filter("ncclGetUniqueId"::equals).count());
                // The child's handle came from the parent's polling, after the call returned.
                broadcast((NcclBackend) sub, new NcclPlans(0, 1)).waitFor();
            }
            // Outside a sub-group, this rank still takes part in the split, with no colour.
            assertTrue(world.split(new int[] {1}, null).isEmpty());
            assertTrue(gpu.log().contains("ncclCommSplit(color -1, key 0)"), gpu.log().toString());
        }
    }

    @Test
    void aSplitPastTheParentsDeadlineAbortsTheParentAndTheChildNcclWritesLate() {
        try (NcclBackend world = backend(0, 2, Duration.ofMillis(300), Map.of("device", "0"))) {
            gpu.initPolls = Integer.MAX_VALUE; // the other member never calls ncclCommSplit
            // The sub-group's longer timeout is not the bound: a rank outside it, which knows only
            // the parent's, would give up at the parent's and abort the parent under the members.
            BackendContext child =
                    new BackendContext(
                            new HashStore(),
                            0,
                            2,
                            Device.Type.GPU,
                            Duration.ofSeconds(20),
                            Map.of());
            DistributedException e =
                    assertThrows(
                            DistributedException.class, () -> world.split(new int[] {0, 1}, child));
            assertTrue(
                    e.getMessage().startsWith("ncclCommSplit did not finish within PT0.3S"),
                    e.getMessage());
            // NCCL's split thread writes the failed child as it ends (here: when the abort of the
            // parent joins it); that child is the caller's to free, and nobody else knows it.
            List<String> log = gpu.log();
            int parent = log.indexOf("ncclCommAbort");
            assertTrue(parent >= 0, log.toString());
            assertTrue(log.indexOf("ncclCommAbort(0x701)") > parent, log.toString());
            assertTrue(
                    log.containsAll(List.of("cuMemFree(9000)", "cuStreamDestroy(stream)")),
                    log.toString());
        }
    }

    @Test
    void aSplitThatFailsAbortsTheFailedChildNcclWrote() {
        try (NcclBackend world = backend(0, 2, Duration.ofSeconds(10), Map.of("device", "0"))) {
            gpu.splitOutcome = NcclResult.INVALID_USAGE.code();
            BackendContext child =
                    new BackendContext(
                            new HashStore(),
                            0,
                            2,
                            Device.Type.GPU,
                            Duration.ofSeconds(10),
                            Map.of());
            DistributedException e =
                    assertThrows(
                            DistributedException.class, () -> world.split(new int[] {0, 1}, child));
            assertTrue(
                    e.getMessage().startsWith("ncclCommSplit -> ncclInvalidUsage"), e.getMessage());
            assertTrue(gpu.log().contains("ncclCommAbort(0x701)"), gpu.log().toString());
        }
    }

    @Test
    void withBlockingWaitTheHostWaitsBoundedAndAnInterruptAbortsAsWorkPromises() {
        gpu.eventsComplete = false;
        try (NcclBackend b =
                backend(0, 1, Duration.ofSeconds(30), Map.of("blockingWait", "true"))) {
            Work w = sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM);
            long t0 = System.nanoTime();
            DistributedException late =
                    assertThrows(
                            DistributedException.class, () -> w.waitFor(Duration.ofMillis(200)));
            assertTrue(
                    late.getMessage().endsWith("did not complete within PT0.2S (it keeps running)"),
                    late.getMessage());
            assertTrue(System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(5));
            assertFalse(
                    gpu.log().contains("cuStreamWaitEvent(legacy waits 0x1002)"), "no stream wait");
            // Work.waitFor: an interrupt aborts the operation (failing the group), the wait goes
            // on until the backend has let go of the arrays, then throws with the flag set.
            Thread.currentThread().interrupt();
            try {
                DistributedException interrupted =
                        assertThrows(DistributedException.class, w::waitFor);
                assertEquals(
                        "interrupted while waiting for nccl allReduce (rank 0), which was aborted",
                        interrupted.getMessage());
                assertTrue(Thread.currentThread().isInterrupted(), "the flag is set");
            } finally {
                Thread.interrupted();
            }
            assertTrue(gpu.log().contains("ncclCommAbort"), gpu.log().toString());
            // Let go: failed, its events destroyed (not kept for reuse), before waitFor threw.
            assertTrue(w.isCompleted() && !w.isSuccess(), w.toString());
            assertTrue(gpu.log().contains("cuEventDestroy(0x1002)"), gpu.log().toString());
            assertTrue(
                    w.getException()
                            .getMessage()
                            .contains("a thread waiting for it was interrupted"),
                    w.getException().getMessage());
            DistributedException later =
                    assertThrows(
                            DistributedException.class,
                            () -> sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM));
            assertTrue(later.getMessage().contains("aborted earlier"), later.getMessage());
        }
    }

    @Test
    void aLazyCommunicatorIsNotSplitEvenOnceItExists() {
        // Whether a rank has run a collective yet may differ across ranks; an option does not.
        try (NcclBackend world = backend(0, 2, Duration.ofSeconds(10))) {
            assertTrue(world.split(new int[] {0}, null).isEmpty());
            broadcast(world, new NcclPlans(0, 2));
            assertTrue(world.split(new int[] {1}, null).isEmpty());
            assertTrue(
                    gpu.log().stream().noneMatch(c -> c.startsWith("ncclCommSplit")),
                    gpu.log().toString());
        }
    }

    @Test
    void aCallRefusedInsideAGroupEndsTheGroupAndBreaksTheCommunicator() {
        gpu.failingCount = 13;
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(10))) {
            TensorView x = view(DataType.FLOAT32, 0x10000, 4);
            TensorView y = view(DataType.FLOAT32, 0x20000, 13);
            DistributedException e =
                    assertThrows(DistributedException.class, () -> sumBoth(b, x, y));
            assertTrue(
                    e.getMessage().contains("ncclAllReduce -> ncclInvalidArgument"),
                    e.getMessage());
            List<String> log = gpu.log();
            int start = log.indexOf("ncclGroupStart");
            // NCCL's group depth is per thread: left open, this thread's later calls never run.
            assertEquals("ncclGroupEnd", log.get(start + 3), log.toString());
            assertTrue(log.contains("ncclCommAbort"), log.toString());
            DistributedException later =
                    assertThrows(DistributedException.class, () -> sum(b, x, ReduceOp.SUM));
            assertTrue(later.getMessage().contains("aborted earlier"), later.getMessage());
        }
    }

    @Test
    void aCollectiveFromAFreshThreadMakesTheContextCurrentFirst() throws Exception {
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(10))) {
            sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM).waitFor();
            // Another thread, with no current context (the driver refuses events there).
            java.util.concurrent.atomic.AtomicReference<Throwable> failure =
                    new java.util.concurrent.atomic.AtomicReference<>();
            Thread t =
                    new Thread(
                            () -> {
                                try {
                                    sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM)
                                            .waitFor();
                                } catch (Throwable e) {
                                    failure.set(e);
                                }
                            });
            t.start();
            t.join(10_000);
            assertEquals(null, failure.get());
        }
    }

    /** One all-reduce (SUM) of two arrays: one NCCL group. */
    private static Work sumBoth(NcclBackend b, TensorView x, TensorView y) {
        NcclPlans plans = new NcclPlans(0, 1);
        return b.runOn(
                "allReduce",
                Device.gpu(0),
                List.of(x, y),
                l -> plans.allReduce(l, ReduceOp.SUM),
                List.of(),
                false);
    }

    private static Work broadcast(NcclBackend b, NcclPlans plans) {
        TensorView v = view(DataType.FLOAT32, 0x10000, 4);
        return b.runOn(
                "broadcast",
                Device.gpu(0),
                List.of(v),
                l -> plans.broadcast(l.get(0), 0),
                List.of(v),
                false);
    }

    /** The failure of a work, once it has one (the watchdog fails it), within 10 s. */
    private static Throwable failureOf(Work w) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!w.isCompleted()) {
            assertTrue(System.nanoTime() < until, w + " neither completed nor failed in 10 s");
            Thread.onSpinWait();
        }
        assertFalse(w.isSuccess(), w.toString());
        return w.getException();
    }

    private static void assertCompletesSoon(Work w) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (!w.isCompleted()) {
            assertTrue(System.nanoTime() < until, w + " did not complete in 5 s");
            Thread.onSpinWait();
        }
        assertTrue(w.isSuccess(), String.valueOf(w.getException()));
    }

    @Test
    void itsFutureIsCompleteOnceTheCallersStreamWaitsAndFailsOnceTheWorkHas() {
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(0, 1, Duration.ofMillis(300))) {
            Work w = sum(b, view(DataType.FLOAT32, 0x10000, 4), ReduceOp.SUM);
            assertTrue(w.getFuture().isDone() && !w.getFuture().isCompletedExceptionally());
            assertEquals(
                    "cuStreamWaitEvent(legacy waits 0x1002)", gpu.log().get(gpu.log().size() - 1));
            assertFalse(w.isCompleted(), "the GPU has not run it");
            failureOf(w); // the watchdog's timeout
            assertTrue(w.getFuture().isCompletedExceptionally());
        }
    }
}
