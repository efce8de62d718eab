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
package ai.djl.distributed.bench;

import ai.djl.Device;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.launch.ChildProcesses;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.pg.ProcessGroups;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;

import java.io.File;
import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * Collective bandwidth in the style of nccl-tests, matching {@code torch_collectives_bench.py} line
 * for line: float32 arrays of ones, warm-up runs (500 up to 1 MiB, 10 above; the JIT needs them),
 * then 20 timed runs up to 1 MiB and 5 above, between barriers; rank 0 prints the time, algbw =
 * bytes / time and busbw = algbw times nccl-tests' factor for the op.
 */
public final class CollectivesBench {

    /** The longest wait for the ranks, all sizes of every op included. */
    static final Duration TIMEOUT = Duration.ofMinutes(20);

    // how long the ranks may take to exit after SIGTERM, and to go after SIGKILL
    private static final Duration STOP_GRACE = Duration.ofSeconds(5);
    private static final Duration KILL_WAIT = Duration.ofSeconds(10);

    private CollectivesBench() {}

    /**
     * Starts {@code worldSize} local ranks, one JVM each with one compute thread, and waits.
     *
     * @param worldSize the number of ranks
     * @param ops the operations
     * @param sizes the message sizes in bytes
     * @param transport auto, tcp or shm
     * @return the exit code: 0 if every rank succeeded
     * @throws IOException if a rank cannot be started
     * @throws InterruptedException if interrupted while waiting
     */
    public static int launch(int worldSize, List<String> ops, List<Long> sizes, String transport)
            throws IOException, InterruptedException {
        return launch(worldSize, ops, sizes, transport, TIMEOUT);
    }

    /** As {@link #launch(int, List, List, String)}, with the longest wait for the ranks. */
    static int launch(
            int worldSize, List<String> ops, List<Long> sizes, String transport, Duration timeout)
            throws IOException, InterruptedException {
        int port = freePortBelowEphemeralRange();
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        // read by the shutdown hook while ranks are still being started
        List<Process> ranks = new CopyOnWriteArrayList<>();
        // A JVM stopped by SIGTERM or SIGINT runs its shutdown hooks, not this method's finally:
        // without the hook, the ranks would run on, orphaned, to the end of the benchmark.
        Thread hook = new Thread(() -> stop(ranks), "djl-bench-collectives-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);
        try {
            for (int r = 0; r < worldSize; r++) {
                ProcessBuilder pb =
                        new ProcessBuilder(
                                java,
                                "-cp",
                                System.getProperty("java.class.path"),
                                "-Dai.djl.pytorch.num_threads=1",
                                "-Dai.djl.pytorch.num_interop_threads=1",
                                CollectivesBench.class.getName(),
                                String.join(",", ops),
                                String.join(",", sizes.stream().map(String::valueOf).toList()));
                Map<String, String> env = pb.environment();
                env.put("RANK", String.valueOf(r));
                env.put("WORLD_SIZE", String.valueOf(worldSize));
                env.put("MASTER_ADDR", "127.0.0.1");
                env.put("MASTER_PORT", String.valueOf(port));
                env.put("OMP_NUM_THREADS", "1");
                env.put("DJL_DIST_TRANSPORT", transport);
                pb.redirectError(ProcessBuilder.Redirect.INHERIT);
                pb.redirectOutput(
                        r == 0
                                ? ProcessBuilder.Redirect.INHERIT
                                : ProcessBuilder.Redirect.to(new File("/dev/null")));
                ranks.add(pb.start());
            }
            int code = 0;
            long deadline = System.nanoTime() + timeout.toNanos();
            for (int r = 0; r < ranks.size(); r++) {
                Process p = ranks.get(r);
                if (!p.waitFor(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    System.err.println(
                            "bench collectives: rank "
                                    + r
                                    + " still running after "
                                    + seconds(timeout)
                                    + " s: every rank stopped (exit status 124)");
                    System.err.flush();
                    return 124;
                }
                code = Math.max(code, p.exitValue());
            }
            return code;
        } finally {
            stop(ranks);
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook is running or has run
            }
        }
    }

    // SIGTERM to the ranks still running (and anything they started), SIGKILL after the grace
    private static void stop(List<Process> ranks) {
        ChildProcesses.stop(
                () -> {
                    List<ProcessHandle> all = new ArrayList<>();
                    for (Process p : ranks) {
                        p.descendants().forEach(all::add);
                        all.add(p.toHandle());
                    }
                    return all;
                },
                STOP_GRACE,
                KILL_WAIT);
    }

    private static String seconds(Duration d) {
        long ms = d.toMillis();
        return ms % 1000 == 0 ? Long.toString(ms / 1000) : Double.toString(ms / 1000.0);
    }

    /**
     * One rank of the benchmark, configured by the launcher's environment.
     *
     * @param args the comma-separated ops and sizes
     */
    public static void main(String[] args) {
        List<String> ops = Arrays.asList(args[0].split(","));
        List<Long> sizes = Arrays.stream(args[1].split(",")).map(Long::parseLong).toList();
        try (ProcessGroup g = ProcessGroups.init("cpu", "env://", -1, -1, Duration.ofMinutes(5));
                NDManager m = NDManager.newBaseManager(Device.cpu())) {
            // Steady state, as a long training run sees it: let the JIT compile the paths first.
            for (String op : ops) {
                run(g, m, op, 4096L * g.getSize(), 300, false);
                run(g, m, op, (1L << 20) * g.getSize(), 20, false);
            }
            for (String op : ops) {
                for (long bytes : sizes) {
                    run(g, m, op, bytes, bytes <= (1 << 20) ? 20 : 5, true);
                }
            }
        }
    }

    private static void run(
            ProcessGroup g, NDManager m, String op, long bytes, int iters, boolean print) {
        int n = g.getSize();
        long numel = bytes / 4;
        try (NDManager sub = m.newSubManager()) {
            NDArray t = sub.ones(new Shape(numel));
            Runnable f;
            switch (op) {
                case "all_reduce":
                    f = () -> g.allReduce(t, ReduceOp.SUM);
                    break;
                case "broadcast":
                    f = () -> g.broadcast(t, 0);
                    break;
                case "all_gather":
                    List<NDArray> outs = new ArrayList<>();
                    for (int i = 0; i < n; i++) {
                        outs.add(sub.zeros(new Shape(numel / n)));
                    }
                    NDArray in = sub.ones(new Shape(numel / n));
                    f = () -> g.allGather(outs, in);
                    break;
                case "all_to_all":
                    NDArray o = sub.zeros(new Shape(numel));
                    f = () -> g.allToAllSingle(o, t, null, null);
                    break;
                case "reduce_scatter":
                    NDArray rs = sub.zeros(new Shape(numel / n));
                    f = () -> g.reduceScatterTensor(rs, t, ReduceOp.SUM);
                    break;
                default:
                    throw new IllegalArgumentException(
                            "op: "
                                    + op
                                    + " (expected: all_reduce, broadcast, all_gather,"
                                    + " all_to_all, reduce_scatter)");
            }
            // The peer warms up twice; the JIT needs more: the paths of large messages (segments,
            // streaming reductions) compile only after they have run a few times, and with 20
            // warm-ups small messages were timed while the JIT's compiler threads still took the
            // CPUs from the ranks (the 4 KiB all-reduce was slower and far less steady than after
            // 500, in alternating runs of ours). Steady state is what training sees.
            int warmups = bytes <= (1 << 20) ? 500 : 10;
            for (int i = 0; i < warmups; i++) {
                f.run();
            }
            g.barrier();
            long t0 = System.nanoTime();
            for (int i = 0; i < iters; i++) {
                f.run();
            }
            g.barrier();
            double dt = (System.nanoTime() - t0) / 1e9 / iters;
            if (print && g.getRank() == 0) {
                double algbw = bytes / dt / 1e9;
                System.out.printf(
                        "%-15s n=%d bytes=%10d time_us=%10.1f algbw_GBps=%6.3f busbw_GBps=%6.3f%n",
                        op, n, bytes, dt * 1e6, algbw, algbw * busFactor(op, n));
                System.out.flush();
            }
        }
    }

    /**
     * A free port in [20000, 30000): a rank retrying its connect to a port of the ephemeral range
     * can be handed that very port as its own and connect to itself.
     */
    private static int freePortBelowEphemeralRange() throws IOException {
        for (int i = 0; i < 1000; i++) {
            int port = ThreadLocalRandom.current().nextInt(20000, 30000);
            try (ServerSocket s = new ServerSocket(port)) {
                return s.getLocalPort();
            } catch (IOException busy) {
                // taken: try another
            }
        }
        throw new IOException("no free port in [20000, 30000)");
    }

    static double busFactor(String op, int n) {
        switch (op) {
            case "all_reduce":
                return 2.0 * (n - 1) / n;
            case "broadcast":
                return 1.0;
            default:
                return (n - 1.0) / n;
        }
    }
}
