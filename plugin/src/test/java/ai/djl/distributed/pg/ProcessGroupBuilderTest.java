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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * The world's builder: backend strings with device types, backend options (the CPU backend's
 * transport), and the errors for settings that cannot work, raised before any rank waits.
 */
@Timeout(120)
class ProcessGroupBuilderTest {

    private static final Duration T = Duration.ofSeconds(30);

    private static ProcessGroups.Builder alone() {
        return ProcessGroups.builder().optStore(new HashStore()).optRank(0).optWorldSize(1);
    }

    private static String fails(ProcessGroups.Builder b) {
        return assertThrows(IllegalArgumentException.class, b::build).getMessage();
    }

    @Test
    void theTransportIsAnOptionOfTheCpuBackendPerGroup() throws Exception {
        for (String transport : List.of("tcp", "shm", "auto")) {
            List<String> described =
                    MultiRank.run(
                            2,
                            transport,
                            T,
                            (g, m) -> {
                                NDArray a = m.create(new float[] {g.getRank() + 1f});
                                g.allReduce(a);
                                assertEquals(3f, a.getFloat(0));
                                return g.toString();
                            });
            String expected = transport.equals("auto") ? "auto (tcp and shm)" : transport;
            for (String d : described) {
                assertTrue(d.contains("cpu -> cpu(transport=" + expected + ")"), d);
            }
        }
    }

    /**
     * A timeout of "forever" (ChronoUnit.FOREVER, Long.MAX_VALUE seconds) works as a very long one,
     * on every transport: no deadline derived from it overflows.
     */
    @Test
    void aTimeoutOfForeverWorks() throws Exception {
        Duration forever = ChronoUnit.FOREVER.getDuration();
        for (String transport : List.of("tcp", "shm", "auto")) {
            HashStore store = new HashStore();
            ExecutorService ranks = Executors.newFixedThreadPool(2);
            try {
                List<Future<Float>> sums = new ArrayList<>();
                for (int r = 0; r < 2; r++) {
                    int rank = r;
                    sums.add(
                            ranks.submit(
                                    () -> {
                                        try (ProcessGroup g =
                                                        ProcessGroups.builder()
                                                                .setBackend("cpu")
                                                                .optStore(store)
                                                                .optRank(rank)
                                                                .optWorldSize(2)
                                                                .optTimeout(forever)
                                                                .optBackendOption(
                                                                        "cpu",
                                                                        "transport",
                                                                        transport)
                                                                .build();
                                                NDManager m = NDManager.newBaseManager()) {
                                            NDArray a = m.create(new float[] {rank + 1f});
                                            Work w = g.allReduceAsync(a, ReduceOp.SUM);
                                            w.waitFor(Duration.ofSeconds(Long.MAX_VALUE));
                                            assertThrows(
                                                    IllegalArgumentException.class,
                                                    () -> w.waitFor(null));
                                            assertThrows(
                                                    IllegalArgumentException.class,
                                                    () -> w.waitFor(Duration.ofSeconds(-1)));
                                            g.barrier();
                                            return a.getFloat(0);
                                        }
                                    }));
                }
                for (Future<Float> sum : sums) {
                    assertEquals(3f, sum.get(60, TimeUnit.SECONDS), transport);
                }
            } finally {
                ranks.shutdownNow();
                assertTrue(ranks.awaitTermination(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void aGroupNamesItsBackendAsGivenAndRunsOnTheCpu() {
        try (ProcessGroup g = alone().setBackend("cpu:gloo").optTimeout(T).build()) {
            assertEquals("cpu:gloo", g.getBackendName());
            assertEquals(Device.cpu(), g.getDefaultDevice());
            List<byte[]> all = g.objects().allGather("x".getBytes(StandardCharsets.UTF_8));
            assertEquals("x", new String(all.get(0), StandardCharsets.UTF_8));
        }
        try (ProcessGroup g = alone().setBackend("gloo").build()) {
            assertEquals("gloo", g.getBackendName());
        }
    }

    @Test
    void settingsThatCannotWorkAreRefusedNamingThem() {
        assertTrue(
                fails(alone().setBackend("cpu:cpu,gpu:nccl"))
                        .startsWith("backend: 'nccl' (expected: one of [cpu, gloo"),
                "no NCCL provider here");
        assertTrue(
                fails(alone().setBackend("gpu:cpu"))
                        .contains(
                                "gives gpu arrays to cpu (expected: a backend that takes them;"
                                        + " cpu takes [cpu])"));
        assertEquals(
                "backend option cpu.transprt (expected one of [transport])",
                fails(alone().setBackend("cpu").optBackendOption("cpu", "transprt", "tcp")));
        assertEquals(
                "backend option cpu.transport: 'udp' (expected: auto, tcp or shm)",
                fails(alone().setBackend("gloo").optBackendOption("gloo", "transport", "udp")));
        assertTrue(
                fails(alone().setBackend("cpu").optBackendOption("nccl", "x", "1"))
                        .startsWith("backend: 'nccl'"));
        assertTrue(
                fails(alone().setBackend("cpu").optInitMethod("env://"))
                        .contains("and a store (expected: one of them"));
        assertEquals(
                "worldSize: -1 (expected: > 0)",
                fails(ProcessGroups.builder().setBackend("cpu").optStore(new HashStore())));
        assertEquals(
                "timeout: PT0S (expected: a positive duration)",
                fails(alone().setBackend("cpu").optTimeout(Duration.ZERO)));
        assertEquals(
                "TORCH_DISTRIBUTED_DEBUG: 'LOUD' (expected: OFF, INFO or DETAIL)",
                assertThrows(IllegalArgumentException.class, () -> DebugLevel.parse("LOUD"))
                        .getMessage());
    }
}
