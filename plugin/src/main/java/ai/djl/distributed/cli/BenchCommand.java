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

import ai.djl.distributed.bench.CollectivesBench;
import ai.djl.distributed.bench.StoreOpsBench;
import ai.djl.distributed.bench.StoreRendezvousBench;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code djl-dist bench}: benchmarks that print one line per measurement. */
final class BenchCommand {

    private BenchCommand() {}

    /**
     * One discarded round warms this JVM's JIT for every size: against a private in-process server
     * ({@code local}, the default, so the server measured stays as fresh as it was started), the
     * measured server ({@code server}, which warms a Java server too), or not at all ({@code
     * none}).
     */
    private static void warmUpRendezvous(
            String how,
            StoreRendezvousBench bench,
            int clients,
            String secret,
            int window,
            int timeout)
            throws InterruptedException {
        String runId = "warmup-" + System.nanoTime();
        switch (how) {
            case "none":
                return;
            case "server":
                bench.run(clients, runId, timeout);
                return;
            case "local":
                try (TcpStoreServer local =
                        TcpStoreServer.builder().optHost("127.0.0.1").optSecret(secret).build()) {
                    new StoreRendezvousBench("127.0.0.1", local.getPort(), window, secret)
                            .run(clients, runId, timeout);
                }
                return;
            default:
                throw new Args.UsageException(
                        "--warm-up: '" + how + "' (expected: local, server or none)");
        }
    }

    static int run(List<String> argv) {
        Args args =
                new Args(
                        argv,
                        Set.of(
                                "tcp",
                                "clients",
                                "repeat",
                                "rounds",
                                "window",
                                "timeout",
                                "world-size",
                                "transport",
                                "ops",
                                "sizes",
                                "warm-up"));
        if (args.positional().size() != 1) {
            throw new Args.UsageException(
                    "bench takes one benchmark: store-rendezvous, store-ops or collectives");
        }
        String endpoint = args.get("tcp", "127.0.0.1:29500");
        int colon = endpoint.lastIndexOf(':');
        if (colon <= 0) {
            throw new Args.UsageException("--tcp: '" + endpoint + "' (expected: HOST:PORT)");
        }
        String host = endpoint.substring(0, colon);
        int port = Integer.parseInt(endpoint.substring(colon + 1));
        try {
            switch (args.positional().get(0)) {
                case "store-rendezvous":
                    // with DJL_DIST_STORE_SECRET set, every client authenticates first
                    String secret = System.getenv("DJL_DIST_STORE_SECRET");
                    StoreRendezvousBench bench =
                            new StoreRendezvousBench(
                                    host, port, args.getInt("window", 2048), secret);
                    int clients = args.getInt("clients", 9000);
                    warmUpRendezvous(
                            args.get("warm-up", "local"),
                            bench,
                            Math.min(clients, 2000),
                            secret,
                            args.getInt("window", 2048),
                            args.getInt("timeout", 120));
                    for (int r = 0; r < args.getInt("repeat", 3); ++r) {
                        double s =
                                bench.run(
                                        clients,
                                        Long.toString(System.nanoTime(), 36),
                                        args.getInt("timeout", 120));
                        System.out.printf("store-rendezvous clients=%d seconds=%.3f%n", clients, s);
                        System.out.flush();
                    }
                    return 0;
                case "store-ops":
                    int k = args.getInt("clients", 16);
                    int m = args.getInt("rounds", 500);
                    for (int r = 0; r < args.getInt("repeat", 1); ++r) {
                        double ops = StoreOpsBench.run(host, port, k, m);
                        System.out.printf(
                                "store-ops clients=%d rounds=%d ops_per_s=%.0f%n", k, m, ops);
                        System.out.flush();
                    }
                    return 0;
                case "collectives":
                    return CollectivesBench.launch(
                            args.getInt("world-size", 2),
                            List.of(args.get("ops", "all_reduce,broadcast,all_gather").split(",")),
                            parseSizes(args.get("sizes", "4K,1M,16M,64M")),
                            args.get("transport", "auto"));
                default:
                    throw new Args.UsageException(
                            "unknown benchmark '" + args.positional().get(0) + "'");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 1;
        } catch (Exception e) {
            if (e instanceof RuntimeException) {
                throw (RuntimeException) e;
            }
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    /** Parses sizes such as 4K, 1M, 64M or 4096 into bytes. */
    static List<Long> parseSizes(String spec) {
        List<Long> sizes = new ArrayList<>();
        for (String s : spec.split(",")) {
            String t = s.trim().toUpperCase(java.util.Locale.ROOT);
            long unit = 1;
            if (t.endsWith("K")) {
                unit = 1L << 10;
            } else if (t.endsWith("M")) {
                unit = 1L << 20;
            } else if (t.endsWith("G")) {
                unit = 1L << 30;
            }
            String digits = unit == 1 ? t : t.substring(0, t.length() - 1);
            try {
                sizes.add(Long.parseLong(digits) * unit);
            } catch (NumberFormatException e) {
                throw new Args.UsageException(
                        "--sizes: '" + s + "' (expected: bytes such as 4096, 4K, 1M, 64M)");
            }
        }
        return sizes;
    }
}
