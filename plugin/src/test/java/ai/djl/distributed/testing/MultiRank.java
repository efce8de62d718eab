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
package ai.djl.distributed.testing;

import ai.djl.Device;
import ai.djl.distributed.CommunicationException;
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
import java.util.function.UnaryOperator;

/**
 * The in-process multi-rank harness (gloo's {@code spawn}): one thread per rank, each with its own
 * world {@link ProcessGroup} on a shared {@link HashStore} and its own NDManager. The first failure
 * is rethrown naming its rank; the whole run is bounded.
 */
public final class MultiRank {

    /** What one rank runs. */
    @FunctionalInterface
    public interface Body<T> {
        /**
         * Runs this rank's part.
         *
         * @param group the world group
         * @param manager an NDManager closed after the body
         * @return the rank's result
         * @throws Exception any failure, rethrown by {@link #run}
         */
        T run(ProcessGroup group, NDManager manager) throws Exception;
    }

    private MultiRank() {}

    /**
     * Runs {@code body} on {@code size} ranks with the CPU backend.
     *
     * @param size the world size
     * @param groupTimeout the groups' timeout
     * @param body each rank's part
     * @param <T> the result type
     * @return the results, by rank
     * @throws Exception the first rank's failure (a rank's exception, or a timeout)
     */
    public static <T> List<T> run(int size, Duration groupTimeout, Body<T> body) throws Exception {
        return run(size, "auto", groupTimeout, body);
    }

    /**
     * Runs {@code body} on {@code size} ranks with the CPU backend over one transport.
     *
     * @param size the world size
     * @param transport "tcp", "shm" or "auto" (the CPU backend's DJL_DIST_TRANSPORT)
     * @param groupTimeout the groups' timeout
     * @param body each rank's part
     * @param <T> the result type
     * @return the results, by rank
     * @throws Exception the first rank's failure (a rank's exception, or a timeout)
     */
    public static <T> List<T> run(int size, String transport, Duration groupTimeout, Body<T> body)
            throws Exception {
        return run(size, transport, groupTimeout, groupTimeout.multipliedBy(3), body);
    }

    /**
     * Runs {@code body} on {@code size} ranks with the CPU backend over one transport, bounding the
     * whole run (set-up included) by {@code runBound} rather than three group timeouts: for bodies
     * that wait on purpose longer than a short group timeout.
     *
     * @param size the world size
     * @param transport "tcp", "shm" or "auto" (the CPU backend's DJL_DIST_TRANSPORT)
     * @param groupTimeout the groups' timeout
     * @param runBound the longest the whole run may take
     * @param body each rank's part
     * @param <T> the result type
     * @return the results, by rank
     * @throws Exception the first rank's failure (a rank's exception, or a timeout)
     */
    public static <T> List<T> run(
            int size, String transport, Duration groupTimeout, Duration runBound, Body<T> body)
            throws Exception {
        return runWorld(
                size,
                b -> b.optBackendOption("cpu", "transport", transport),
                groupTimeout,
                runBound,
                body);
    }

    /**
     * Runs {@code body} on {@code size} ranks whose world groups {@code settings} configures
     * (backend string, options, debug level) on top of the harness's store, rank, size and timeout.
     *
     * @param size the world size
     * @param settings adds settings to each rank's builder
     * @param groupTimeout the groups' timeout
     * @param body each rank's part
     * @param <T> the result type
     * @return the results, by rank
     * @throws Exception the first rank's failure (a rank's exception, or a timeout)
     */
    public static <T> List<T> run(
            int size,
            UnaryOperator<ProcessGroups.Builder> settings,
            Duration groupTimeout,
            Body<T> body)
            throws Exception {
        return runWorld(size, settings, groupTimeout, groupTimeout.multipliedBy(3), body);
    }

    private static <T> List<T> runWorld(
            int size,
            UnaryOperator<ProcessGroups.Builder> settings,
            Duration groupTimeout,
            Duration runBound,
            Body<T> body)
            throws Exception {
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
                                                    settings.apply(
                                                                    ProcessGroups.builder()
                                                                            .setBackend("cpu")
                                                                            .optStore(store)
                                                                            .optRank(rank)
                                                                            .optWorldSize(size)
                                                                            .optTimeout(
                                                                                    groupTimeout))
                                                            .build();
                                            NDManager m = NDManager.newBaseManager(Device.cpu())) {
                                        T result = body.run(g, m);
                                        try {
                                            // As gloo's spawn: no rank tears down while
                                            // another may still talk to it.
                                            g.barrier();
                                        } catch (CommunicationException | IllegalStateException e) {
                                            // The body left the group failed or destroyed on
                                            // purpose (fault tests); its result stands.
                                        }
                                        return result;
                                    }
                                }));
            }
            List<T> results = new ArrayList<>();
            long deadline = System.nanoTime() + runBound.toNanos();
            for (int r = 0; r < size; r++) {
                try {
                    results.add(
                            futures.get(r).get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS));
                } catch (ExecutionException e) {
                    Throwable c = e.getCause();
                    if (c instanceof Exception ex) {
                        ex.addSuppressed(new RuntimeException("rank " + r + " failed"));
                        throw ex;
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
