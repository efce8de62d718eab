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
package ai.djl.distributed.backend.cpu.reduce;

import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Throughput of {@link Reductions#reduce} SUM next to libtorch's in-place add of the same sizes
 * (DJL's PyTorch engine, {@code NDArray.addi} on arrays wrapping direct buffers), and a check that
 * {@code NDManager.create(directByteBuffer, ...)} shares the buffer's memory. Not a test. Run it
 * with libtorch on one thread:
 *
 * <pre>
 * mvn -q -pl plugin test-compile dependency:build-classpath -Dmdep.outputFile=target/cp.txt
 * OMP_NUM_THREADS=1 java -Dai.djl.pytorch.num_threads=1 -Dai.djl.pytorch.num_interop_threads=1 \
 *     -cp plugin/target/test-classes:plugin/target/classes:$(cat plugin/target/cp.txt) \
 *     ai.djl.distributed.backend.cpu.reduce.ReductionsBench [rounds]
 * </pre>
 *
 * <p>GB/s counts the bytes of one operand per second (dst is read and written and src read, so the
 * memory traffic is three times that). Each case is warmed up for a second; then every round times
 * every case once, about 10 ms each, so that a busy machine slows all cases alike. It prints each
 * case's median over the rounds (default 15), its best, and the median per second of the thread's
 * CPU time, which time spent descheduled on a shared machine does not count.
 */
public final class ReductionsBench {

    private static final int MIB = 1 << 20;
    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private final List<Case> cases = new ArrayList<>();

    private ReductionsBench() {}

    /**
     * Runs the benchmark.
     *
     * @param args the number of rounds, optionally
     */
    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 15;
        ReductionsBench bench = new ReductionsBench();
        try (NDManager manager = NDManager.newBaseManager("PyTorch")) {
            System.out.println(zeroCopy(manager));
            bench.java(DataType.FLOAT32, 32 * MIB, true);
            bench.torch(manager, DataType.FLOAT32, 32 * MIB);
            bench.java(DataType.FLOAT32, 4096, true);
            bench.torch(manager, DataType.FLOAT32, 4096);
            bench.java(DataType.FLOAT32, 32 * MIB, false);
            bench.java(DataType.FLOAT32, 4096, false);
            bench.heapArrays(32 * MIB);
            bench.java(DataType.FLOAT16, 32 * MIB, true);
            bench.torch(manager, DataType.FLOAT16, 32 * MIB);
            // DJL 0.35.1 cannot wrap bfloat16 memory: its JNI has no bfloat16 case, and aborts.
            bench.java(DataType.BFLOAT16, 32 * MIB, true);
            bench.java(DataType.FLOAT64, 32 * MIB, true);
            bench.java(DataType.INT32, 32 * MIB, true);
            bench.java(DataType.INT8, 32 * MIB, true);
            TorchReductions torch = new TorchReductions(manager, 0, 0);
            // Where libtorch's per-call cost is repaid: the default thresholds.
            bench.torchReductions(torch, DataType.FLOAT32, 32 * MIB);
            for (int bytes : new int[] {64 * 1024, 256 * 1024, MIB}) {
                bench.java(DataType.FLOAT32, bytes, true);
                bench.torchReductions(torch, DataType.FLOAT32, bytes);
            }
            bench.torchReductions(torch, DataType.FLOAT16, 32 * MIB);
            for (int bytes : new int[] {4 * 1024, 8 * 1024, 16 * 1024}) {
                bench.java(DataType.FLOAT16, bytes, true);
                bench.torchReductions(torch, DataType.FLOAT16, bytes);
            }
            bench.run(rounds);
        }
    }

    private void java(DataType type, int bytes, boolean direct) {
        ByteBuffer dst = filled(bytes, direct, type);
        ByteBuffer src = filled(bytes, direct, type);
        int count = bytes / type.getNumOfBytes();
        String label =
                String.format(
                        "java  %-9s SUM  %-6s %s", type, direct ? "direct" : "heap", size(bytes));
        cases.add(
                new Case(
                        label,
                        bytes,
                        () -> Reductions.reduce(ReduceOp.Type.SUM, type, dst, 0, src, 0, count)));
    }

    // The add loop on plain arrays, with no buffers: the ceiling for Java.
    private void heapArrays(int bytes) {
        float[] a = new float[bytes / Float.BYTES];
        float[] b = new float[bytes / Float.BYTES];
        Arrays.fill(b, 1e-7f);
        Runnable add =
                () -> {
                    for (int i = 0; i < a.length; i++) {
                        a[i] += b[i];
                    }
                };
        cases.add(new Case("java  float[] a[i] += b[i]     " + size(bytes), bytes, add));
    }

    private void torchReductions(TorchReductions torch, DataType type, int bytes) {
        ByteBuffer dst = filled(bytes, true, type);
        ByteBuffer src = filled(bytes, true, type);
        int count = bytes / type.getNumOfBytes();
        String label = String.format("TorchReductions %-9s SUM %s", type, size(bytes));
        cases.add(
                new Case(
                        label,
                        bytes,
                        () -> torch.reduce(ReduceOp.Type.SUM, type, dst, 0, src, 0, count)));
    }

    private void torch(NDManager manager, DataType type, int bytes) {
        ByteBuffer dst = filled(bytes, true, type);
        ByteBuffer src = filled(bytes, true, type);
        Shape shape = new Shape(bytes / type.getNumOfBytes());
        NDArray a = manager.create(dst, shape, type);
        NDArray b = manager.create(src, shape, type);
        String label = String.format("torch %-9s addi direct %s", type, size(bytes));
        cases.add(new Case(label, bytes, () -> a.addi(b)));
    }

    private void run(int rounds) {
        for (Case c : cases) {
            c.warmUp();
        }
        for (int r = 0; r < rounds; r++) {
            for (Case c : cases) {
                c.sample();
            }
        }
        System.out.println();
        for (Case c : cases) {
            System.out.println(c.report());
        }
    }

    // NDManager.create on a direct buffer: torch::from_blob on its memory, or a copy?
    private static String zeroCopy(NDManager manager) {
        ByteBuffer buf = ByteBuffer.allocateDirect(16).order(ByteOrder.LITTLE_ENDIAN);
        for (int i = 0; i < 4; i++) {
            buf.putFloat(4 * i, i);
        }
        try (NDArray array = manager.create(buf, new Shape(4), DataType.FLOAT32);
                NDArray ones = manager.ones(new Shape(4))) {
            buf.putFloat(0, 42f);
            float seen = array.toFloatArray()[0];
            array.addi(ones);
            float written = buf.getFloat(4);
            return String.format(
                    "zero-copy: buffer written after create, array reads %s (42.0 if shared);"
                            + " after array.addi(1), buffer reads %s (2.0 if shared)",
                    seen, written);
        }
    }

    private static ByteBuffer filled(int bytes, boolean direct, DataType type) {
        ByteBuffer buf =
                (direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes))
                        .order(ByteOrder.LITTLE_ENDIAN);
        Random random = new Random(bytes);
        int size = type.getNumOfBytes();
        for (int i = 0; i + size <= bytes; i += size) {
            float v = (float) random.nextGaussian();
            switch (type) {
                case FLOAT32:
                    buf.putFloat(i, v);
                    break;
                case FLOAT64:
                    buf.putDouble(i, v);
                    break;
                case FLOAT16:
                    buf.putShort(i, Float16.fromFloat(v));
                    break;
                case BFLOAT16:
                    buf.putShort(i, BFloat16.fromFloat(v));
                    break;
                case INT8:
                    buf.put(i, (byte) random.nextInt());
                    break;
                default:
                    buf.putInt(i, random.nextInt());
                    break;
            }
        }
        return buf;
    }

    private static String size(int bytes) {
        return bytes >= MIB ? bytes / MIB + " MiB" : bytes / 1024 + " KiB";
    }

    /** One timed operation, with its samples. */
    private static final class Case {

        private final String label;
        private final long bytes;
        private final Runnable op;
        private final List<Double> seconds = new ArrayList<>();
        private final List<Double> cpuSeconds = new ArrayList<>();
        private int calls;

        Case(String label, long bytes, Runnable op) {
            this.label = label;
            this.bytes = bytes;
            this.op = op;
        }

        void warmUp() {
            long end = System.nanoTime() + 1_000_000_000L;
            int n = 0;
            long start = System.nanoTime();
            while (System.nanoTime() < end) {
                op.run();
                n++;
            }
            // About 10 ms per sample, so that small buffers are timed in bulk.
            double each = (System.nanoTime() - start) / (double) n;
            calls = (int) Math.max(1, 10_000_000 / each);
        }

        void sample() {
            long cpu = THREADS.getCurrentThreadCpuTime();
            long start = System.nanoTime();
            for (int c = 0; c < calls; c++) {
                op.run();
            }
            seconds.add((System.nanoTime() - start) / 1e9 / calls);
            cpuSeconds.add((THREADS.getCurrentThreadCpuTime() - cpu) / 1e9 / calls);
        }

        String report() {
            double[] s = seconds.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            double[] cpu = cpuSeconds.stream().mapToDouble(Double::doubleValue).sorted().toArray();
            double median = s[s.length / 2];
            return String.format(
                    Locale.ROOT,
                    "%-40s median %6.2f GB/s (%8.1f us)  best %6.2f  per CPU second %6.2f GB/s",
                    label,
                    bytes / median / 1e9,
                    median * 1e6,
                    bytes / s[0] / 1e9,
                    bytes / cpu[cpu.length / 2] / 1e9);
        }
    }
}
