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
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

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
     * @param clients K
     * @param rounds M
     * @return operations per second over all clients
     * @throws Exception if a client cannot connect, fails, or an increment was lost
     */
    public static double run(String host, int port, int clients, int rounds) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(clients);
        CyclicBarrier start = new CyclicBarrier(clients);
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
                                        start.await(60, TimeUnit.SECONDS);
                                        long t0 = System.nanoTime();
                                        for (int i = 0; i < rounds; ++i) {
                                            String key = "k/" + run + "/" + idx + "/" + (i % 64);
                                            s.set(key, value);
                                            s.get(key);
                                            s.add("counter/" + run, 1);
                                        }
                                        return System.nanoTime() - t0;
                                    }
                                }));
            }
            long wall = 0;
            for (Future<Long> f : walls) {
                wall = Math.max(wall, f.get(600, TimeUnit.SECONDS));
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
}
