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

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.Work;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.time.temporal.ChronoUnit;

/**
 * {@link NcclWork#waitFor}'s arguments and its wait on a work already done, over a {@link
 * ScriptedGpu}, with and without {@code blockingWait}: timeouts are checked as the CPU backend's
 * {@code FutureWork} checks them (the message names the value; a timeout of centuries waits as one
 * of decades does), and a work already done is answered without the CUDA context.
 */
@Timeout(60)
class NcclWorkWaitTest {

    private final ScriptedGpu gpu = new ScriptedGpu();

    private NcclBackend backend(Duration timeout, boolean blocking) {
        return new NcclBackend(
                ScriptedGpu.context(0, 1, timeout),
                gpu.runtime(),
                DevicePointers::get,
                null,
                blocking);
    }

    private static Work sum(NcclBackend b) {
        return ScriptedGpu.sum(b, ScriptedGpu.view(0x10000, 4), 1);
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aNullOrNegativeTimeoutIsRefusedNamingIt(boolean blocking) {
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(Duration.ofSeconds(30), blocking)) {
            Work pending = sum(b);
            IllegalArgumentException none =
                    assertThrows(IllegalArgumentException.class, () -> pending.waitFor(null));
            assertEquals("timeout: null (expected: a duration >= 0)", none.getMessage());
            IllegalArgumentException negative =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> pending.waitFor(Duration.ofSeconds(-1)));
            assertEquals("timeout: PT-1S (expected: a duration >= 0)", negative.getMessage());
            assertFalse(pending.isCompleted(), "a refused wait leaves the work alone");
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void aWaitOfCenturiesOnACompletedWorkReturns(boolean blocking) {
        try (NcclBackend b = backend(Duration.ofSeconds(10), blocking)) {
            Work w = sum(b);
            w.waitFor(Duration.ofSeconds(5));
            assertDoesNotThrow(() -> w.waitFor(ChronoUnit.FOREVER.getDuration()));
        }
    }

    @Test
    void aWaitOfCenturiesOnAPendingWorkEndsWithItsFailure() {
        gpu.eventsComplete = false;
        try (NcclBackend b = backend(Duration.ofMillis(300), true)) {
            Work w = sum(b);
            // Bounded by the work's own deadline: the watchdog fails it at 300 ms.
            DistributedException e =
                    assertThrows(
                            DistributedException.class,
                            () -> w.waitFor(ChronoUnit.FOREVER.getDuration()));
            assertTrue(
                    e.getMessage().startsWith("nccl allReduce (rank 0) timed out"), e.getMessage());
        }
    }

    @Test
    void waitingForACompletedWorkNeedsNoContext() {
        NcclBackend b = backend(Duration.ofSeconds(10), true);
        try {
            Work w = sum(b);
            w.waitFor(Duration.ofSeconds(5));
            assertTrue(w.isSuccess());
            gpu.ctxError = CudaResult.INVALID_CONTEXT.code(); // the driver going away since
            assertDoesNotThrow(() -> w.waitFor(Duration.ofSeconds(5)));
        } finally {
            gpu.ctxError = 0;
            b.close();
        }
    }

    @Test
    void waitingForAFailedWorkGivesItsFailureWithoutAContext() {
        gpu.eventsComplete = false;
        NcclBackend b = backend(Duration.ofMillis(300), true);
        try {
            Work w = sum(b);
            assertThrows(DistributedException.class, () -> w.waitFor(Duration.ofSeconds(10)));
            gpu.ctxError = CudaResult.INVALID_CONTEXT.code();
            DistributedException e =
                    assertThrows(
                            DistributedException.class, () -> w.waitFor(Duration.ofSeconds(5)));
            assertTrue(
                    e.getMessage().startsWith("nccl allReduce (rank 0) timed out"), e.getMessage());
        } finally {
            gpu.ctxError = 0;
            b.close();
        }
    }
}
