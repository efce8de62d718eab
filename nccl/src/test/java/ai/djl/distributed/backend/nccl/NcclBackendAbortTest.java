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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.distributed.DistributedException;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The backend's ways of ending over a {@link ScriptedGpu} that aborts as NCCL does (the kernels
 * exit, the end events complete): a collective cut short by an abort never counts as done, whoever
 * looks at it; the watchdog does not die unnoticed; a communicator whose watchdog cannot start is
 * not leaked, and a healthy parent is not aborted for it.
 */
@Timeout(60)
class NcclBackendAbortTest {

    private final ScriptedGpu gpu = new ScriptedGpu();
    private final HashStore store = new HashStore();

    private BackendContext context(int rank, int size, Duration timeout) {
        return new BackendContext(store, rank, size, Device.Type.GPU, timeout, Map.of());
    }

    private NcclBackend backend(int rank, int size, Duration timeout) {
        return new NcclBackend(
                context(rank, size, timeout), gpu.runtime(), DevicePointers::get, null, false);
    }

    private static Work sum(NcclBackend b, int size) {
        return ScriptedGpu.sum(b, ScriptedGpu.view(0x10000, 4), size);
    }

    /** A backend of one rank whose watchdogs' threads the factory makes. */
    private NcclBackend withThreads(ThreadFactory threads) {
        return new NcclBackend(
                context(0, 1, Duration.ofSeconds(10)),
                gpu.runtime(),
                DevicePointers::get,
                null,
                false,
                threads);
    }

    /** Whether a thread other than the aborting one, polling during the abort, sees success. */
    private static void pollDuringAbort(Work w, AtomicReference<Boolean> seen) {
        Thread user = new Thread(() -> seen.compareAndSet(null, w.isCompleted() && w.isSuccess()));
        user.start();
        try {
            user.join(10_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void closeFailsWhatItsAbortCutShortWhenFinalizingRunsOutOfTime() {
        gpu.eventsComplete = false;
        NcclBackend b = backend(0, 2, Duration.ofSeconds(1));
        Work w = sum(b, 2);
        gpu.initPolls = Integer.MAX_VALUE; // a peer is gone: finalizing never ends
        b.close();
        List<String> log = gpu.log();
        int f = log.indexOf("ncclCommFinalize");
        assertTrue(f >= 0 && log.indexOf("ncclCommAbort") > f, log.toString());
        assertFalse(log.contains("ncclCommDestroy"), log.toString());
        assertTrue(w.isCompleted());
        assertFalse(w.isSuccess(), "a collective cut short by the abort counted as done");
        String m = w.getException().getMessage();
        assertTrue(m.startsWith("the nccl backend was closed; finalizing did not complete"), m);
    }

    @Test
    void aWorkPolledWhileTheWatchdogAbortsIsNotASuccess() {
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(0, 1, Duration.ofMillis(300))) {
            Work w = sum(b, 1);
            AtomicReference<Boolean> seen = new AtomicReference<>();
            gpu.duringAbort = () -> pollDuringAbort(w, seen);
            Throwable failure = failureOf(w);
            assertTrue(failure.getMessage().contains("timed out"), failure.getMessage());
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (seen.get() == null) { // the work may fail before the abort runs
                assertTrue(System.nanoTime() < until, "no abort: " + gpu.log());
                Thread.onSpinWait();
            }
            assertEquals(Boolean.FALSE, seen.get(), "success seen while the abort ran");
        }
    }

    @Test
    void aSplitThatAbortsTheParentFailsTheParentsPendingWork() {
        try (NcclBackend world =
                new NcclBackend(
                        context(0, 2, Duration.ofSeconds(10)),
                        gpu.runtime(),
                        DevicePointers::get,
                        0,
                        false)) {
            gpu.eventsComplete = false;
            Work w = sum(world, 2);
            AtomicReference<Boolean> seen = new AtomicReference<>();
            gpu.duringAbort = () -> pollDuringAbort(w, seen);
            gpu.splitOutcome = NcclResult.INVALID_USAGE.code(); // NCCL refuses the split
            BackendContext child = ScriptedGpu.context(0, 2, Duration.ofSeconds(10));
            assertThrows(DistributedException.class, () -> world.split(new int[] {0, 1}, child));
            assertEquals(Boolean.FALSE, seen.get(), "success seen while the parent was aborted");
            failureOf(w);
            DistributedException later =
                    assertThrows(DistributedException.class, () -> sum(world, 2));
            assertTrue(later.getMessage().contains("aborted"), later.getMessage());
        }
    }

    @Test
    void anErrorInTheWatchdogBreaksTheCommunicatorRatherThanEndingItUnnoticed() {
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(0, 1, Duration.ofSeconds(30))) {
            Work w = sum(b, 1);
            gpu.asyncErrorThrows = new OutOfMemoryError("scripted: no memory left");
            Throwable failure = failureOf(w);
            assertTrue(
                    failure.getMessage()
                            .startsWith(
                                    "the NCCL watchdog failed: java.lang.OutOfMemoryError:"
                                            + " scripted"),
                    failure.getMessage());
            assertTrue(gpu.log().contains("ncclCommAbort"), gpu.log().toString());
            DistributedException later = assertThrows(DistributedException.class, () -> sum(b, 1));
            assertTrue(later.getMessage().contains("aborted earlier"), later.getMessage());
        }
    }

    /** Makes threads, but for the given calls (counted from 1), which throw as an exhausted JVM. */
    private static ThreadFactory failingAt(Throwable failure, int... calls) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            int call = n.incrementAndGet();
            for (int c : calls) {
                if (c == call) {
                    if (failure instanceof Error e) {
                        throw e;
                    }
                    throw (RuntimeException) failure;
                }
            }
            return new Thread(r);
        };
    }

    @Test
    void aCommunicatorWhoseWatchdogCannotStartIsFreedAndTheNextCollectiveMakesAnother() {
        OutOfMemoryError noThread = new OutOfMemoryError("unable to create native thread");
        try (NcclBackend b = withThreads(failingAt(noThread, 1))) {
            assertSame(noThread, assertThrows(OutOfMemoryError.class, () -> sum(b, 1)));
            assertEquals(
                    List.of(
                            "ncclCommAbort",
                            "cuMemFree(9000)",
                            "cuStreamDestroy(stream)",
                            "cuDevicePrimaryCtxRelease"),
                    afterInit(gpu.log()),
                    gpu.log().toString());
            sum(b, 1).waitFor();
            assertTrue(b.toString().contains("rank 0 of 1 on GPU 0"), b.toString());
        }
        List<String> log = gpu.log();
        assertTrue(log.get(log.size() - 1).equals("cuDevicePrimaryCtxRelease"), log.toString());
        assertEquals(1, log.stream().filter("ncclCommFinalize"::equals).count(), log.toString());
    }

    @Test
    void aFailedCleanupDoesNotHideWhyCreationFailed() {
        gpu.initPolls = Integer.MAX_VALUE; // the peer never joins
        gpu.duringAbort = () -> gpu.ctxError = CudaResult.INVALID_CONTEXT.code(); // driver goes
        try (NcclBackend b = backend(0, 2, Duration.ofMillis(300))) {
            DistributedException e = assertThrows(DistributedException.class, () -> sum(b, 2));
            assertTrue(
                    e.getMessage().startsWith("ncclCommInitRankConfig did not finish within"),
                    e.getMessage());
            assertCleanupFailureSuppressed(e);
        } finally {
            gpu.ctxError = 0;
        }
    }

    @Test
    void aFailedCleanupDoesNotHideWhyTheWatchdogCouldNotStart() {
        OutOfMemoryError noThread = new OutOfMemoryError("unable to create native thread");
        gpu.duringAbort = () -> gpu.ctxError = CudaResult.INVALID_CONTEXT.code();
        try (NcclBackend b = withThreads(failingAt(noThread, 1))) {
            assertSame(noThread, assertThrows(OutOfMemoryError.class, () -> sum(b, 1)));
            assertCleanupFailureSuppressed(noThread);
        } finally {
            gpu.ctxError = 0;
        }
    }

    /** The communicator was aborted, freeing failed, and the context went back all the same. */
    private void assertCleanupFailureSuppressed(Throwable cause) {
        List<String> log = gpu.log();
        assertTrue(log.contains("ncclCommAbort"), log.toString());
        assertEquals("cuDevicePrimaryCtxRelease", log.get(log.size() - 1), log.toString());
        assertEquals(1, cause.getSuppressed().length, cause.toString());
        String m = cause.getSuppressed()[0].getMessage();
        assertTrue(m.startsWith("cuCtxSetCurrent -> "), m);
    }

    @Test
    void aChildWhoseWatchdogCannotStartIsFreedAndTheParentStaysSound() {
        childWhoseWatchdogCannotStart(new OutOfMemoryError("unable to create native thread"));
    }

    @Test
    void aChildThatFailsOtherwiseThanInNcclDoesNotAbortTheParent() {
        childWhoseWatchdogCannotStart(new IllegalStateException("no thread for you"));
    }

    private void childWhoseWatchdogCannotStart(Throwable failure) {
        // The world's watchdog is thread 1, the child's thread 2.
        try (NcclBackend world =
                new NcclBackend(
                        context(0, 2, Duration.ofSeconds(10)),
                        gpu.runtime(),
                        DevicePointers::get,
                        0,
                        false,
                        failingAt(failure, 2))) {
            BackendContext child = context(0, 1, Duration.ofSeconds(10));
            assertSame(
                    failure,
                    assertThrows(Throwable.class, () -> world.split(new int[] {0}, child)));
            List<String> log = gpu.log();
            int split = log.indexOf("ncclCommSplit(color 0, key 0)");
            assertTrue(split >= 0, log.toString());
            List<String> after = log.subList(split, log.size());
            assertTrue(after.contains("ncclCommAbort(0x701)"), "the child leaked: " + log);
            assertFalse(after.contains("ncclCommAbort"), "the parent was aborted: " + log);
            // The child's context reference went back; the world's is still held.
            assertEquals(
                    1,
                    log.stream().filter("cuDevicePrimaryCtxRelease"::equals).count(),
                    log.toString());
            sum(world, 2).waitFor(); // the parent still runs collectives
        }
    }

    /** The calls after the communicator's init. */
    private static List<String> afterInit(List<String> log) {
        for (int i = 0; i < log.size(); i++) {
            if (log.get(i).startsWith("ncclCommInitRankConfig")) {
                return log.subList(i + 1, log.size());
            }
        }
        throw new AssertionError("no init in " + log);
    }

    /** The failure of a work, once it has one, within 10 s. */
    private static Throwable failureOf(Work w) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!w.isCompleted()) {
            assertTrue(System.nanoTime() < until, w + " neither completed nor failed in 10 s");
            Thread.onSpinWait();
        }
        assertFalse(w.isSuccess(), w.toString());
        return w.getException();
    }
}
