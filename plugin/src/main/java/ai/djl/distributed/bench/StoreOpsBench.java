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

import ai.djl.distributed.store.tcp.TcpStore;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The load of PyTorch's {@code torch_store_bench.py clients}, from Java: K clients, each doing M
 * rounds of set (64 bytes), get and add on one shared counter.
 */
public final class StoreOpsBench {

    private StoreOpsBench() {}

    /**
     * Runs the load and checks that no increment was lost.
     *
     * @param host the server's host
     * @param port the server's port
     * @param clients K, at least 1
     * @param rounds M, at least 1
     * @return operations per second over all clients
     * @throws IllegalArgumentException if {@code clients} or {@code rounds} is below 1
     * @throws Exception if a client cannot connect, fails, or an increment was lost: the first
     *     client's failure, not the others' wait for it at the start line
     */
    public static double run(String host, int port, int clients, int rounds) throws Exception {
        atLeastOne("clients", clients);
        atLeastOne("rounds", rounds);
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        CountDownLatch start = new CountDownLatch(clients);
        AtomicReference<Failure> first = new AtomicReference<>();
        byte[] value = new byte[64];
        java.util.Arrays.fill(value, (byte) 'x');
        String run = Long.toString(System.nanoTime(), 36);
        try {
            List<Future<Long>> walls = new ArrayList<>();
            for (int c = 0; c < clients; ++c) {
                int idx = c;
                walls.add(
                        pool.submit(
                                () -> {
                                    try (TcpStore s =
                                            TcpStore.builder()
                                                    .setHost(host)
                                                    .setPort(port)
                                                    .optTimeout(Duration.ofSeconds(60))
                                                    .build()) {
                                        start.countDown();
                                        awaitStart(start, first);
                                        long t0 = System.nanoTime();
                                        for (int i = 0; i < rounds; ++i) {
                                            String key = "k/" + run + "/" + idx + "/" + (i % 64);
                                            s.set(key, value);
                                            s.get(key);
                                            s.add("counter/" + run, 1);
                                        }
                                        return System.nanoTime() - t0;
                                    } catch (CancellationException e) {
                                        throw e; // another client failed first
                                    } catch (Exception | Error e) {
                                        // the first failure is the cause; the others waiting
                                        // at the start line see it within a poll and stop
                                        first.compareAndSet(null, new Failure(idx, e));
                                        throw e;
                                    }
                                }));
            }
            long wall = 0;
            Throwable broken = null;
            for (Future<Long> f : walls) {
                try {
                    wall = Math.max(wall, f.get(600, TimeUnit.SECONDS));
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof CancellationException) {
                        // stopped by the client that failed: its own future tells why
                        broken = e.getCause();
                        continue;
                    }
                    throw failed(clients, first.get(), e.getCause());
                }
            }
            if (broken != null) {
                throw failed(clients, first.get(), broken);
            }
            try (TcpStore s = TcpStore.builder().setHost(host).setPort(port).build()) {
                long total = s.add("counter/" + run, 0);
                if (total != (long) clients * rounds) {
                    throw new IllegalStateException(
                            "lost increments: " + total + " of " + (long) clients * rounds);
                }
            }
            return 3.0 * clients * rounds / (wall / 1e9);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Waits at the start line for every client to connect, for 60 s at most, and stops at once
     * (within a 10 ms poll) if one has failed: a latch that cannot be broken, unlike a barrier
     * whose reset would let a client arriving after it wait out the time alone.
     */
    private static void awaitStart(CountDownLatch start, AtomicReference<Failure> first)
            throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!start.await(10, TimeUnit.MILLISECONDS)) {
            if (first.get() != null) {
                throw new CancellationException("another client failed");
            }
            if (System.nanoTime() - deadline > 0) {
                throw new TimeoutException("not every client connected within 60 s");
            }
        }
    }

    private static IllegalStateException failed(int clients, Failure first, Throwable cause) {
        Throwable why = first == null ? cause : first.cause();
        return new IllegalStateException(
                (first == null ? "a client" : "client " + first.client())
                        + " of "
                        + clients
                        + " failed: "
                        + why,
                why);
    }

    private static void atLeastOne(String name, int value) {
        if (value < 1) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: at least 1)");
        }
    }

    /** The first client that failed, and why. */
    private record Failure(int client, Throwable cause) {}
}
