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
package ai.djl.distributed.cli;

import ai.djl.distributed.store.tcp.TcpStore;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * {@code djl-dist demo}: the smoke run of the quick start. Rank 0 serves a TcpStore; every rank (a
 * thread here) joins, publishes its address, reads everyone else's and meets at a barrier, as the
 * ranks of a job do at start-up.
 */
@Command(
        name = "demo",
        mixinStandardHelpOptions = true,
        description = "Starts a store server and N client threads that rendezvous on it.")
final class DemoCommand implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @Option(names = "--clients", paramLabel = "N", description = "ranks (threads); default 8")
    private int clients = 8;

    /**
     * Runs the demo; blocks until every rank has met (at most about a minute).
     *
     * @return 0
     */
    @Override
    public Integer call() {
        int n = clients;
        if (n < 1) {
            throw new ParameterException(
                    spec.commandLine(), "--clients: " + n + " (expected: at least 1)");
        }
        long start = System.nanoTime();
        Duration timeout = Duration.ofSeconds(60);
        try (TcpStore master =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(0)
                        .optServer(true)
                        .optWorldSize(n)
                        .optWaitForWorkers(false)
                        .optTimeout(timeout)
                        .build()) {
            System.out.println("rank 0 serves a TcpStore on 127.0.0.1:" + master.getPort());
            ExecutorService pool = Executors.newFixedThreadPool(n);
            try {
                List<Future<String>> ranks = new ArrayList<>();
                for (int r = 0; r < n; ++r) {
                    int rank = r;
                    ranks.add(pool.submit(() -> rank(rank, n, master, timeout)));
                }
                master.waitForWorkers();
                for (Future<String> f : ranks) {
                    System.out.println(f.get(60, TimeUnit.SECONDS));
                }
            } catch (Exception e) {
                throw new IllegalStateException("demo failed: " + e, e);
            } finally {
                pool.shutdownNow();
            }
            System.out.printf(
                    "%d ranks met in %.1f ms; the store holds %d keys%n",
                    n, (System.nanoTime() - start) / 1e6, master.numKeys());
        }
        return 0;
    }

    private static String rank(int rank, int n, TcpStore master, Duration timeout) {
        try (TcpStore store =
                rank == 0
                        ? null
                        : TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(master.getPort())
                                .optWorldSize(n)
                                .optTimeout(timeout)
                                .build()) {
            TcpStore s = rank == 0 ? master : store;
            s.set("addr/" + rank, "rank" + rank + "@127.0.0.1");
            StringBuilder peers = new StringBuilder();
            for (int p = 0; p < n; ++p) {
                if (p != rank) {
                    peers.append(peers.length() == 0 ? "" : ", ").append(s.getString("addr/" + p));
                }
            }
            // the store-based barrier of PyTorch's init_process_group
            if (s.add("barrier", 1) == n) {
                s.set("barrier/last", "1");
            }
            s.waitFor(List.of("barrier/last"));
            return "rank " + rank + " of " + n + " sees " + (n > 1 ? peers : "no peers");
        }
    }
}
