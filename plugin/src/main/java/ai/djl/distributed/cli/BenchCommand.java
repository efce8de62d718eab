package ai.djl.distributed.cli;

import ai.djl.distributed.bench.CollectivesBench;
import ai.djl.distributed.bench.StoreOpsBench;
import ai.djl.distributed.bench.StoreRendezvousBench;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code djl-dist bench}: benchmarks that print one line per measurement. */
final class BenchCommand {

    private BenchCommand() {}

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
                                "sizes"));
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
                    StoreRendezvousBench bench =
                            new StoreRendezvousBench(host, port, args.getInt("window", 2048));
                    int clients = args.getInt("clients", 9000);
                    // one discarded round warms this JVM's JIT (and a Java server's) for every size
                    bench.run(
                            Math.min(clients, 2000),
                            "warmup-" + System.nanoTime(),
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
