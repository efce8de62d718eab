package ai.djl.distributed.ddp;

import ai.djl.Device;
import ai.djl.distributed.backend.CommunicationException;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.pg.ProcessGroups;
import ai.djl.distributed.store.HashStore;
import ai.djl.ndarray.NDManager;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The in-process multi-rank harness (gloo's {@code spawn}), as the plugin's test tree has it: one
 * thread per rank, each with its own world group on a shared {@link HashStore} and its own
 * NDManager; the first failure is rethrown naming its rank.
 *
 * <p>DJL's PyTorch engine allows one {@code GradientCollector} at a time per JVM, so ranks take
 * {@link #BACKWARD} around forward and backward; their steps (the collectives) run unlocked.
 */
final class Ranks {

    /** Held by a rank from before its forward pass to after its backward pass. */
    static final Object BACKWARD = new Object();

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    /** What one rank runs. */
    @FunctionalInterface
    interface Body<T> {
        T run(ProcessGroup group, NDManager manager) throws Exception;
    }

    private Ranks() {}

    static <T> List<T> run(int size, Body<T> body) throws Exception {
        HashStore store = new HashStore();
        ExecutorService pool = Executors.newFixedThreadPool(size);
        try {
            List<Future<T>> futures = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                int rank = r;
                futures.add(
                        pool.submit(
                                () -> {
                                    Thread.currentThread().setName("rank-" + rank);
                                    try (ProcessGroup g =
                                                    ProcessGroups.init(
                                                            "cpu", store, rank, size, TIMEOUT);
                                            NDManager m = NDManager.newBaseManager(Device.cpu())) {
                                        T result = body.run(g, m);
                                        try {
                                            // No rank tears down while another may still
                                            // talk to it.
                                            g.barrier();
                                        } catch (CommunicationException e) {
                                            // With 3+ ranks a rank that left the barrier and
                                            // destroyed its group can fail a slower rank's
                                            // barrier (see .handoff/NOTES.md); the body's
                                            // results stand, as in the plugin's harness.
                                        }
                                        return result;
                                    }
                                }));
            }
            List<T> results = new ArrayList<>();
            long deadline = System.nanoTime() + TIMEOUT.multipliedBy(2).toNanos();
            for (int r = 0; r < size; r++) {
                try {
                    results.add(
                            futures.get(r).get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof Exception) {
                        c.addSuppressed(new RuntimeException("rank " + r + " failed"));
                        throw (Exception) c;
                    }
                    throw new AssertionError("rank " + r + " failed", c);
                } catch (TimeoutException e) {
                    throw new AssertionError("rank " + r + " did not finish in time", e);
                }
            }
            return results;
        } finally {
            pool.shutdownNow();
            if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
                throw new AssertionError("rank threads did not stop");
            }
            store.close();
        }
    }
}
