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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.BackendContext;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The order of an abort and the failure of the works it cuts short, over a {@link ScriptedGpu}
 * whose abort completes the stream's events, as NCCL's does: a work seen complete once an abort has
 * begun is no success, a work is reported failed (its arrays handed back) only once the abort has
 * stopped its kernels, and a thread settling a call of its own does not hold the abort off. Each
 * race is set up with latches in the driver's calls, not with timing.
 */
@Timeout(60)
class NcclAbortOrderTest {

    private final ScriptedGpu gpu = new ScriptedGpu();

    private static NcclBackend backend(
            NcclRuntime runtime, int size, Duration timeout, Integer eager, boolean blocking) {
        return new NcclBackend(
                ScriptedGpu.context(0, size, timeout),
                runtime,
                DevicePointers::get,
                eager,
                blocking);
    }

    @Test
    void anEndEventCompletedByAnAbortBegunDuringItsQueryIsNoSuccess() throws Exception {
        gpu.eventsComplete = false;
        CountDownLatch inQuery = new CountDownLatch(1);
        CountDownLatch aborted = new CountDownLatch(1);
        AtomicReference<Thread> user = new AtomicReference<>();
        NcclRuntime runtime =
                gpu.runtime(
                        (m, a) -> {
                            if (m.equals("cuEventQuery") && Thread.currentThread() == user.get()) {
                                // The user's poll is past its check of the abort: hold the query
                                // until the abort has completed the stream's events.
                                inQuery.countDown();
                                aborted.await(10, TimeUnit.SECONDS);
                            }
                            return null;
                        },
                        (m, a) -> null);
        try (NcclBackend world = backend(runtime, 2, Duration.ofSeconds(10), 0, false)) {
            Work w = ScriptedGpu.sum(world, ScriptedGpu.view(0x10000, 4), 2);
            AtomicReference<Boolean> seen = new AtomicReference<>();
            Thread t = new Thread(() -> seen.set(w.isCompleted() && w.isSuccess()));
            user.set(t);
            t.start();
            assertTrue(inQuery.await(10, TimeUnit.SECONDS));
            gpu.duringAbort = aborted::countDown;
            gpu.splitOutcome = NcclResult.INVALID_USAGE.code(); // the split aborts the parent
            BackendContext child = ScriptedGpu.context(0, 2, Duration.ofSeconds(10));
            assertThrows(DistributedException.class, () -> world.split(new int[] {0, 1}, child));
            t.join(10_000);
            assertFalse(t.isAlive());
            assertTrue(gpu.log().contains("ncclCommAbort"), gpu.log().toString());
            assertEquals(Boolean.FALSE, seen.get(), "a collective cut short counted as done");
        }
    }

    @Test
    void aTimedOutWorkFailsOnlyOnceTheAbortHasStoppedItsKernels() {
        gpu.eventsComplete = false;
        AtomicReference<Work> work = new AtomicReference<>();
        AtomicReference<Boolean> doneAtAbort = new AtomicReference<>();
        NcclRuntime runtime =
                gpu.runtime(
                        (m, a) -> null,
                        (m, a) -> {
                            if (m.equals("ncclCommAbort")) {
                                // With blockingWait the work's future is its own: read as the
                                // abort begins, without polling the work.
                                doneAtAbort.set(work.get().getFuture().isDone());
                            }
                            return null;
                        });
        try (NcclBackend b = backend(runtime, 1, Duration.ofMillis(300), null, true)) {
            Work w = ScriptedGpu.sum(b, ScriptedGpu.view(0x10000, 4), 1);
            work.set(w);
            DistributedException e =
                    assertThrows(
                            DistributedException.class, () -> w.waitFor(Duration.ofSeconds(10)));
            assertTrue(
                    e.getMessage().startsWith("nccl allReduce (rank 0) timed out"), e.getMessage());
            assertEquals(
                    Boolean.FALSE,
                    doneAtAbort.get(),
                    "the work was reported failed before ncclCommAbort ran: " + gpu.log());
            // Its events (0x1001, 0x1002) are destroyed only after the abort, not reused.
            List<String> log = gpu.log();
            int abort = log.indexOf("ncclCommAbort");
            assertTrue(abort >= 0, log.toString());
            assertTrue(log.indexOf("cuEventDestroy(0x1001)") > abort, log.toString());
            assertTrue(log.indexOf("cuEventDestroy(0x1002)") > abort, log.toString());
        }
    }

    @Test
    void aThreadSettlingACallDoesNotHoldTheAbortOffUntilItsDeadline() throws Exception {
        CountDownLatch settling = new CountDownLatch(1);
        NcclRuntime runtime =
                gpu.runtime(
                        (m, a) -> null,
                        (m, a) -> {
                            if (m.equals("ncclAllReduce") && (Long) a[2] == 77) {
                                gpu.initPolls = Integer.MAX_VALUE; // a slow peer: in progress
                                settling.countDown();
                                return NcclResult.IN_PROGRESS.code();
                            }
                            return null;
                        });
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(runtime, 2, Duration.ofSeconds(30), null, false)) {
            Work a = ScriptedGpu.sum(b, ScriptedGpu.view(0x10000, 4), 2);
            AtomicReference<Throwable> issued = new AtomicReference<>();
            Thread other =
                    new Thread(
                            () -> {
                                try {
                                    ScriptedGpu.sum(b, ScriptedGpu.view(0x20000, 77), 2);
                                } catch (Throwable e) {
                                    issued.set(e);
                                }
                            });
            other.start();
            assertTrue(settling.await(10, TimeUnit.SECONDS));
            // The watchdog aborts on the CUDA error of a's end event, while the other thread
            // holds the communicator, settling its call for up to 30 s.
            gpu.eventError = CudaResult.ILLEGAL_ADDRESS.code();
            other.join(10_000);
            assertFalse(other.isAlive(), "the abort waited for the call's deadline: " + gpu.log());
            assertTrue(gpu.log().contains("ncclCommAbort"), gpu.log().toString());
            assertTrue(
                    issued.get().getMessage().contains("is being aborted"),
                    String.valueOf(issued.get()));
            assertTrue(a.isCompleted() && !a.isSuccess(), a.toString());
        }
    }
}
