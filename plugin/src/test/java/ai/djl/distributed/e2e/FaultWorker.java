package ai.djl.distributed.e2e;

import ai.djl.Device;
import ai.djl.distributed.pg.Distributed;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.pg.ReduceOp;
import ai.djl.distributed.pg.Work;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.time.Duration;

/**
 * A worker of the end-to-end fault suite, run under a real {@code djlrun}: runs its arguments as
 * steps, in order, on the world group it creates first ({@code env://}, the transport from {@code
 * DJL_DIST_TRANSPORT}, the group timeout from {@code FAULT_TIMEOUT_MS}, default 60 s).
 *
 * <p>Every line it prints starts with a word the tests look for: {@code PID n}, {@code READY},
 * {@code OK what}, {@code FAILED after MS ms: message} (a step failed; the worker then tries one
 * more all-reduce and prints {@code NEXT after MS ms: message}, waits {@code FAULT_LINGER_MS}
 * (default 0) so that its peers can report before the launcher stops them, and exits 3), {@code
 * DONE}.
 *
 * <ul>
 *   <li>{@code allreduce:COUNT}: all-reduces COUNT float32 values, rank r holding {@code r + 1 +
 *       i}, and checks the sum against its closed form; prints {@code OK allreduce COUNT};
 *   <li>{@code loop:COUNT}: prints {@code READY}, then all-reduces COUNT values until that fails;
 *   <li>{@code fail:RANK:CODE}: rank RANK exits with CODE; {@code fail-first:RANK:CODE} only in
 *       attempt 0 (TORCHELASTIC_RESTART_COUNT);
 *   <li>{@code silent:RANK}: rank RANK prints {@code READY} and sleeps far past the group timeout
 *       while the others go on to the next step; {@code late:RANK:MS}: rank RANK sleeps MS first;
 *   <li>{@code mismatch:KIND:COUNT}: an all-reduce of COUNT values where rank 1 differs from the
 *       others in KIND: {@code op} (MAX instead of SUM), {@code size} (one more value) or {@code
 *       type} (float64);
 *   <li>{@code interrupt:MS}: on rank 0, a thread interrupts the main thread MS ms into an
 *       all-reduce that rank 1 never joins (rank 1 sleeps);
 * </ul>
 */
public final class FaultWorker {

    private static final long START = System.nanoTime();

    private FaultWorker() {}

    /**
     * Runs the steps.
     *
     * @param args the steps
     * @throws Exception if a step fails in a way the suite does not expect
     */
    public static void main(String[] args) throws Exception {
        System.out.println("PID " + ProcessHandle.current().pid());
        long timeoutMs = Long.parseLong(System.getenv().getOrDefault("FAULT_TIMEOUT_MS", "60000"));
        ProcessGroup g =
                Distributed.initProcessGroup("cpu", "env://", -1, -1, Duration.ofMillis(timeoutMs));
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            for (String step : args) {
                long begun = System.nanoTime();
                try {
                    run(step.split(":"), g, m);
                } catch (RuntimeException e) {
                    report("FAILED", begun, e);
                    long next = System.nanoTime();
                    try {
                        g.allReduce(m.ones(new Shape(4)));
                        System.out.println("NEXT succeeded");
                    } catch (RuntimeException again) {
                        report("NEXT", next, again);
                    }
                    System.out.flush();
                    Thread.sleep(
                            Long.parseLong(System.getenv().getOrDefault("FAULT_LINGER_MS", "0")));
                    Runtime.getRuntime().halt(3);
                }
            }
            System.out.println("DONE rank " + g.getRank());
        } finally {
            Distributed.destroyProcessGroup();
        }
    }

    private static void report(String word, long since, RuntimeException e) {
        long ms = (System.nanoTime() - since) / 1_000_000;
        System.out.println(
                word
                        + " after "
                        + ms
                        + " ms: "
                        + e.getClass().getSimpleName()
                        + ": "
                        + e.getMessage());
        System.out.flush();
    }

    private static void run(String[] p, ProcessGroup g, NDManager m) throws Exception {
        int rank = g.getRank();
        switch (p[0]) {
            case "allreduce":
                allReduce(g, m, Integer.parseInt(p[1]));
                System.out.println("OK allreduce " + p[1]);
                break;
            case "loop":
                System.out.println("READY");
                System.out.flush();
                while (true) {
                    allReduce(g, m, Integer.parseInt(p[1]));
                }
            case "fail":
            case "fail-first":
                boolean first = "0".equals(System.getenv("TORCHELASTIC_RESTART_COUNT"));
                if (Integer.parseInt(p[1]) == rank && (p[0].equals("fail") || first)) {
                    System.out.println("EXITING with " + p[2]);
                    System.out.flush();
                    System.exit(Integer.parseInt(p[2]));
                }
                break;
            case "silent":
                if (Integer.parseInt(p[1]) == rank) {
                    System.out.println("READY");
                    System.out.flush();
                    Thread.sleep(Long.MAX_VALUE);
                }
                break;
            case "late":
                if (Integer.parseInt(p[1]) == rank) {
                    Thread.sleep(Long.parseLong(p[2]));
                }
                break;
            case "mismatch":
                mismatch(g, m, p[1], Integer.parseInt(p[2]));
                break;
            case "interrupt":
                interrupt(g, m, Long.parseLong(p[1]));
                break;
            default:
                throw new IllegalArgumentException("unknown step: " + String.join(":", p));
        }
        System.out.flush();
    }

    /** All-reduces rank + 1 + i and checks every element against n(n+1)/2 + n i. */
    private static void allReduce(ProcessGroup g, NDManager m, int count) {
        int n = g.getSize();
        try (NDArray a = m.arange(0f, (float) count).add(g.getRank() + 1)) {
            g.allReduce(a, ReduceOp.SUM);
            float[] got = a.toFloatArray();
            for (int i = 0; i < count; i++) {
                float want = n * (n + 1) / 2f + (float) n * i;
                if (got[i] != want) {
                    throw new AssertionError(
                            "element " + i + ": " + got[i] + " (want " + want + ")");
                }
            }
        }
    }

    private static void mismatch(ProcessGroup g, NDManager m, String kind, int count) {
        boolean odd = g.getRank() == 1;
        ReduceOp op = odd && kind.equals("op") ? ReduceOp.MAX : ReduceOp.SUM;
        int size = odd && kind.equals("size") ? count + 1 : count;
        DataType type = odd && kind.equals("type") ? DataType.FLOAT64 : DataType.FLOAT32;
        try (NDArray a = m.ones(new Shape(size), type)) {
            g.allReduce(a, op);
        }
    }

    private static void interrupt(ProcessGroup g, NDManager m, long afterMs) throws Exception {
        if (g.getRank() != 0) {
            System.out.println("READY");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
        Thread main = Thread.currentThread();
        Thread interrupter =
                new Thread(
                        () -> {
                            try {
                                Thread.sleep(afterMs);
                            } catch (InterruptedException e) {
                                return;
                            }
                            main.interrupt();
                        });
        interrupter.start();
        try (NDArray a = m.ones(new Shape(1024))) {
            Work w = g.allReduceAsync(a, ReduceOp.SUM);
            w.waitFor();
        } finally {
            interrupter.interrupt();
            Thread.interrupted(); // the next steps run uninterrupted
        }
    }
}
