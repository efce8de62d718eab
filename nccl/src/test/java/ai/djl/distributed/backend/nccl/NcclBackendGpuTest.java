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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.nccl.CudaTensors.Tensor;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.store.Store;
import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * The {@code nccl} backend at world size 1 on a real GPU, through the whole path: the unique id
 * through the store, a non-blocking communicator, every collective's plan, stream ordering against
 * the caller's stream, the watchdog, and the error paths. The tensors are the machine's own
 * libtorch's ({@link CudaTensors}); expected values are written from each collective's meaning at
 * one rank (identity, or a real kernel for AVG and PREMUL_SUM).
 */
@Tag("gpu")
@Timeout(300)
class NcclBackendGpuTest {

    private static final int N = 1000;
    private static CudaTensors gpu;
    private static HashStore store;
    private static NcclBackend backend;
    private final NcclPlans plans = new NcclPlans(0, 1);

    @BeforeAll
    static void start() {
        gpu = new CudaTensors();
        store = new HashStore();
        backend = world(store, 0, 1, Duration.ofSeconds(60), Map.of());
    }

    @AfterAll
    static void stop() {
        if (backend != null) {
            backend.close();
        }
        if (gpu != null) {
            gpu.close();
        }
    }

    static NcclBackend world(
            Store s, int rank, int size, Duration timeout, Map<String, String> options) {
        return (NcclBackend)
                new NcclBackendProvider()
                        .create(
                                new BackendContext(
                                        s, rank, size, Device.Type.GPU, timeout, options));
    }

    private static Work run(
            NcclBackend b,
            String what,
            List<Tensor> tensors,
            Function<List<TensorView>, List<NcclCall>> plan) {
        List<TensorView> views = new ArrayList<>();
        for (Tensor t : tensors) {
            views.add(DevicePointers.check(t.view, gpu.gpu()));
        }
        return b.runOn(what, gpu.gpu(), views, plan, tensors, false);
    }

    private static float[] x(float scale) {
        float[] v = new float[N];
        for (int k = 0; k < N; k++) {
            v[k] = scale * (k % 97 + 1);
        }
        return v;
    }

    private static Tensor input() {
        Tensor t = gpu.make(DataType.FLOAT32, N);
        t.writeFloats(x(1));
        return t;
    }

    @Test
    void theUniqueIdTravelsThroughTheStoreUnderPyTorchsFirstKey() {
        try (Tensor t = input()) {
            sum(backend, t).waitFor();
        }
        assertEquals(NcclUniqueId.BYTES, store.get("0").length);
    }

    @Test
    void allReduceOfEveryOpAtOneRank() {
        Object[][] cases = {
            {ReduceOp.SUM, 1f},
            {ReduceOp.PRODUCT, 1f},
            {ReduceOp.MIN, 1f},
            {ReduceOp.MAX, 1f},
            {ReduceOp.AVG, 1f},
            {ReduceOp.premulSum(3), 3f}
        };
        for (Object[] c : cases) {
            ReduceOp op = (ReduceOp) c[0];
            try (Tensor t = input()) {
                Work w = run(backend, "allReduce", List.of(t), v -> plans.allReduce(v, op));
                w.waitFor();
                assertArrayEquals(x((Float) c[1]), t.readFloats(), op.toString());
                assertCompletes(w);
            }
        }
    }

    @Test
    void everyOtherCollectiveAtOneRank() {
        try (Tensor in = input();
                Tensor out = gpu.make(DataType.FLOAT32, N);
                Tensor rows = gpu.make(DataType.FLOAT32, N / 4, 4);
                Tensor rowsOut = gpu.make(DataType.FLOAT32, N / 4, 4)) {
            run(backend, "broadcast", List.of(in), v -> plans.broadcast(v.get(0), 0)).waitFor();
            assertArrayEquals(x(1), in.readFloats(), "broadcast");
            run(
                            backend,
                            "reduce",
                            List.of(in),
                            v -> plans.reduce(v.get(0), 0, ReduceOp.premulSum(2)))
                    .waitFor();
            assertArrayEquals(x(2), in.readFloats(), "reduce, PREMUL_SUM 2");
            in.writeFloats(x(1));

            List<Check> outOfPlace =
                    List.of(
                            new Check(
                                    "allGatherIntoTensor",
                                    v -> plans.allGatherIntoTensor(v.get(1), v.get(0)),
                                    1),
                            new Check(
                                    "allGather",
                                    v -> plans.allGather(List.of(v.get(1)), v.get(0)),
                                    1),
                            new Check(
                                    "reduceScatterTensor",
                                    v ->
                                            plans.reduceScatterTensor(
                                                    v.get(1), v.get(0), ReduceOp.premulSum(2)),
                                    2),
                            new Check(
                                    "reduceScatter",
                                    v ->
                                            plans.reduceScatter(
                                                    v.get(1), List.of(v.get(0)), ReduceOp.AVG),
                                    1),
                            new Check(
                                    "gather", v -> plans.gather(List.of(v.get(1)), v.get(0), 0), 1),
                            new Check(
                                    "scatter",
                                    v -> plans.scatter(v.get(1), List.of(v.get(0)), 0),
                                    1),
                            new Check(
                                    "allToAll",
                                    v -> plans.allToAll(List.of(v.get(1)), List.of(v.get(0))),
                                    1));
            for (Check c : outOfPlace) {
                out.writeFloats(new float[N]);
                run(backend, c.name, List.of(in, out), c.plan).waitFor();
                assertArrayEquals(x(c.scale), out.readFloats(), c.name);
                assertArrayEquals(x(1), in.readFloats(), c.name + " left its input alone");
            }
            rows.writeFloats(x(1));
            long[] splits = {N / 4};
            run(
                            backend,
                            "allToAllSingle",
                            List.of(rowsOut, rows),
                            v -> plans.allToAllSingle(v.get(0), v.get(1), splits, splits))
                    .waitFor();
            assertArrayEquals(x(1), rowsOut.readFloats(), "allToAllSingle");
        }
        Work barrier = backend.barrier();
        barrier.waitFor(Duration.ofSeconds(30)); // blocks the host
        assertTrue(barrier.isCompleted() && barrier.isSuccess());
    }

    private record Check(
            String name, Function<List<TensorView>, List<NcclCall>> plan, float scale) {}

    @Test
    void everyTypeAtOneRank() {
        // Doubling a positive normal float adds one to its exponent field: an expectation that
        // needs no conversion code. Small integers triple exactly.
        Object[][] floats = {
            {DataType.FLOAT32, 4, 23},
            {DataType.FLOAT64, 8, 52},
            {DataType.FLOAT16, 2, 10},
            {DataType.BFLOAT16, 2, 7}
        };
        for (Object[] f : floats) {
            DataType type = (DataType) f[0];
            int width = (Integer) f[1];
            int mantissa = (Integer) f[2];
            ByteBuffer in = ByteBuffer.allocate(N * width).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer doubled = ByteBuffer.allocate(N * width).order(ByteOrder.LITTLE_ENDIAN);
            for (int k = 0; k < N; k++) {
                float value = k % 97 + 1;
                long bits = bitsOf(type, value);
                put(in, width, bits);
                put(doubled, width, bits + (1L << mantissa));
            }
            reduceAndCompare(type, in.flip(), ReduceOp.SUM, in);
            reduceAndCompare(type, in, ReduceOp.AVG, in);
            reduceAndCompare(type, in, ReduceOp.premulSum(2), doubled.flip());
        }
        Object[][] ints = {
            {DataType.INT8, 1}, {DataType.UINT8, 1}, {DataType.INT32, 4}, {DataType.INT64, 8}
        };
        for (Object[] i : ints) {
            DataType type = (DataType) i[0];
            int width = (Integer) i[1];
            ByteBuffer in = ByteBuffer.allocate(N * width).order(ByteOrder.LITTLE_ENDIAN);
            ByteBuffer tripled = ByteBuffer.allocate(N * width).order(ByteOrder.LITTLE_ENDIAN);
            for (int k = 0; k < N; k++) {
                put(in, width, k % 40 + 1);
                put(tripled, width, 3L * (k % 40 + 1));
            }
            reduceAndCompare(type, in.flip(), ReduceOp.MAX, in);
            reduceAndCompare(type, in, ReduceOp.premulSum(3), tripled.flip());
        }
        ByteBuffer bools = ByteBuffer.allocate(N);
        for (int k = 0; k < N; k++) {
            bools.put((byte) (k % 3 == 0 ? 1 : 0));
        }
        reduceAndCompare(DataType.BOOLEAN, bools.flip(), ReduceOp.SUM, bools);
        try (Tensor t = gpu.make(DataType.BOOLEAN, N)) {
            assertThrows(
                    IllegalArgumentException.class,
                    () ->
                            run(
                                    backend,
                                    "allReduce",
                                    List.of(t),
                                    v -> plans.allReduce(v, ReduceOp.AVG)));
        }
    }

    private static long bitsOf(DataType type, float value) {
        switch (type) {
            case FLOAT64:
                return Double.doubleToRawLongBits(value);
            case FLOAT16:
                // value = 1.m * 2^e with e < 7 here: sign 0, exponent e + 15, top 10 mantissa bits
                int e = Math.getExponent(value);
                long m = (Float.floatToRawIntBits(value) & 0x7fffff) >> 13;
                return ((long) (e + 15) << 10) | m;
            case BFLOAT16:
                return Float.floatToRawIntBits(value) >>> 16; // exact for these small integers
            default:
                return Float.floatToRawIntBits(value);
        }
    }

    private static void put(ByteBuffer b, int width, long bits) {
        switch (width) {
            case 1:
                b.put((byte) bits);
                break;
            case 2:
                b.putShort((short) bits);
                break;
            case 4:
                b.putInt((int) bits);
                break;
            default:
                b.putLong(bits);
        }
    }

    private void reduceAndCompare(DataType type, ByteBuffer in, ReduceOp op, ByteBuffer expected) {
        try (Tensor t = gpu.make(type, N)) {
            t.write(in.duplicate());
            run(backend, "allReduce", List.of(t), v -> plans.allReduce(v, op)).waitFor();
            assertEquals(expected.duplicate().rewind(), t.read(), type + " " + op);
        }
    }

    @Test
    void theCollectiveWaitsForTheCallersStreamAndTheCallerForIt() {
        // A long chain of copies on the caller's (legacy default) stream, then the input written
        // there: the collective must see that input, with no host synchronisation in between.
        long big = 256L << 20;
        try (Tensor a = gpu.make(DataType.UINT8, big);
                Tensor b = gpu.make(DataType.UINT8, big);
                Tensor out = gpu.make(DataType.FLOAT32, N)) {
            Tensor in = input();
            for (int i = 0; i < 200; i++) {
                gpu.check(
                        gpu.cu.cuMemcpyDtoDAsync_v2(
                                b.view.address(),
                                a.view.address(),
                                big,
                                NcclCommunicator.LEGACY_STREAM),
                        "cuMemcpyDtoDAsync");
            }
            gpu.check(
                    gpu.cu.cuMemsetD32Async(
                            in.view.address(),
                            Float.floatToRawIntBits(5f),
                            N,
                            NcclCommunicator.LEGACY_STREAM),
                    "cuMemsetD32Async");
            Work w =
                    run(
                            backend,
                            "allGatherIntoTensor",
                            List.of(in, out),
                            v -> plans.allGatherIntoTensor(v.get(1), v.get(0)));
            w.waitFor();
            // Freed at once, reused at once on the caller's stream: the collective must have read
            // it already, because the caller's stream now waits for the collective.
            in.close();
            try (Tensor reuse = gpu.make(DataType.FLOAT32, N)) {
                gpu.check(
                        gpu.cu.cuMemsetD32Async(
                                reuse.view.address(),
                                Float.floatToRawIntBits(-1f),
                                N,
                                NcclCommunicator.LEGACY_STREAM),
                        "cuMemsetD32Async");
                float[] fives = new float[N];
                Arrays.fill(fives, 5f);
                assertArrayEquals(fives, out.readFloats());
            }
            assertCompletes(w);
        }
    }

    @Test
    void aSubGroupSplitOffTheWorldReduces() {
        // Split only off a communicator made at creation (PyTorch's device_id).
        BackendContext child =
                new BackendContext(
                        new HashStore(), 0, 1, Device.Type.GPU, Duration.ofSeconds(60), Map.of());
        try (Tensor t = input();
                NcclBackend world =
                        world(
                                new HashStore(),
                                0,
                                1,
                                Duration.ofSeconds(60),
                                Map.of("device", "0"));
                NcclBackend sub = (NcclBackend) world.split(new int[] {0}, child).orElseThrow()) {
            run(sub, "allReduce", List.of(t), v -> plans.allReduce(v, ReduceOp.premulSum(2)))
                    .waitFor();
            assertArrayEquals(x(2), t.readFloats());
            // With no colour, NCCL makes no communicator (and says so with a null).
            assertTrue(world.split(new int[] {}, null).isEmpty());
        }
    }

    @Test
    void aBadRootIsRefusedWithNcclsText() {
        try (NcclBackend b = world(new HashStore(), 0, 1, Duration.ofSeconds(30), Map.of());
                Tensor t = input()) {
            DistributedException e =
                    assertThrows(
                            DistributedException.class,
                            () ->
                                    run(
                                            b,
                                            "broadcast",
                                            List.of(t),
                                            v -> plans.broadcast(v.get(0), 7)));
            assertTrue(e.getMessage().contains("ncclInvalidArgument"), e.getMessage());
            assertTrue(e.getMessage().contains("broadcast"), e.getMessage());
        }
    }

    @Test
    void aPeerThatNeverJoinsFailsAtTheDeadline() {
        long t0 = System.nanoTime();
        try (NcclBackend b = world(new HashStore(), 0, 2, Duration.ofSeconds(5), Map.of());
                Tensor t = input()) {
            DistributedException e = assertThrows(DistributedException.class, () -> sum(b, t));
            assertTrue(e.getMessage().contains("did not finish within PT5S"), e.getMessage());
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
        assertTrue(seconds < 30, "took " + seconds + " s");
    }

    @Test
    void twoRanksOnOneGpuFailCleanlyOnBoth() throws Exception {
        NcclVersion version = gpu.runtime.nccl().version();
        Path dir = Files.createTempDirectory("nccl-duplicate");
        String javaBin = ProcessHandle.current().info().command().orElse("java");
        List<Process> ranks = new ArrayList<>();
        try {
            for (int r = 0; r < 2; r++) {
                ranks.add(
                        new ProcessBuilder(
                                        javaBin,
                                        "-cp",
                                        System.getProperty("java.class.path"),
                                        DuplicateGpuRank.class.getName(),
                                        dir.resolve("store").toString(),
                                        String.valueOf(r))
                                .redirectErrorStream(true)
                                .redirectOutput(dir.resolve("rank" + r + ".log").toFile())
                                .start());
            }
            for (int r = 0; r < 2; r++) {
                assertTrue(ranks.get(r).waitFor(120, TimeUnit.SECONDS), "rank " + r + " hangs");
                String log = Files.readString(dir.resolve("rank" + r + ".log"));
                assertEquals(0, ranks.get(r).exitValue(), log);
                if (version.compareTo(new NcclVersion(2, 30, 0)) < 0) {
                    assertTrue(log.contains("Duplicate GPU detected"), log);
                }
                assertTrue(log.contains(DuplicateGpuRank.FAILED), log);
            }
        } finally {
            for (Process p : ranks) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            try (var files = Files.list(dir)) {
                for (Path f : files.toList()) {
                    Files.deleteIfExists(f);
                }
            }
            Files.deleteIfExists(dir);
        }
    }

    private Work sum(NcclBackend b, Tensor t) {
        return run(b, "allReduce", List.of(t), v -> plans.allReduce(v, ReduceOp.SUM));
    }

    private static void assertCompletes(Work w) {
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!w.isCompleted()) {
            assertTrue(System.nanoTime() < until, w + " not complete after 30 s");
            Thread.onSpinWait();
        }
        assertTrue(w.isSuccess(), String.valueOf(w.getException()));
    }
}
