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
import ai.djl.distributed.launch.Endpoint;
import ai.djl.distributed.store.tcp.StoreTls;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** {@code djl-dist bench}: benchmarks that print one line per measurement. */
@Command(
        name = "bench",
        mixinStandardHelpOptions = true,
        description = "Benchmarks that print one line per measurement.",
        subcommands = {
            BenchCommand.StoreRendezvous.class,
            BenchCommand.StoreOps.class,
            BenchCommand.Collectives.class
        })
final class BenchCommand {

    private BenchCommand() {}

    /** Refuses a count below 1 as bad usage, naming the option and the value. */
    static void atLeastOne(CommandSpec spec, String option, int value) {
        if (value < 1) {
            throw new ParameterException(
                    spec.commandLine(), option + ": " + value + " (expected: at least 1)");
        }
    }

    /** The server measured, {@code --tcp H:P}. */
    static class Server {

        @Option(
                names = "--tcp",
                paramLabel = "H:P",
                converter = EndpointConverter.class,
                description = "the TcpStore server measured; default 127.0.0.1:29500")
        Endpoint tcp = new Endpoint("127.0.0.1", 29500);
    }

    /** {@code bench store-rendezvous}: N simultaneous raw clients meet on a counter. */
    @Command(
            name = "store-rendezvous",
            mixinStandardHelpOptions = true,
            description = {
                "N simultaneous raw clients: connect, add to a counter, wait for the last",
                "(each authenticates first when DJL_DIST_STORE_SECRET is set)"
            })
    static final class StoreRendezvous extends Server implements Callable<Integer> {

        @Spec CommandSpec spec;

        @Option(names = "--clients", paramLabel = "N", description = "clients; default 9000")
        int clients = 9000;

        @Option(names = "--repeat", paramLabel = "R", description = "measured rounds; default 3")
        int repeat = 3;

        @Option(
                names = "--window",
                paramLabel = "W",
                description = "connections opened at once; default 2048")
        int window = 2048;

        @Option(
                names = "--timeout",
                paramLabel = "SECONDS",
                description = "longest round; default 120")
        int timeout = 120;

        /**
         * One discarded round warms this JVM's JIT for every size: against a private in-process
         * server ({@code local}, the default, so the server measured stays as fresh as it was
         * started), the measured server ({@code server}, which warms a Java server too), or not at
         * all ({@code none}).
         */
        @Option(
                names = {"--warm-up", "--warm_up"},
                paramLabel = "HOW",
                description = "local (default), server or none")
        WarmUp warmUp = WarmUp.LOCAL;

        /**
         * Runs the rounds; blocks until they end.
         *
         * @return 0
         * @throws Exception when a round fails or times out
         */
        @Override
        public Integer call() throws Exception {
            atLeastOne(spec, "--clients", clients);
            atLeastOne(spec, "--repeat", repeat);
            atLeastOne(spec, "--window", window);
            atLeastOne(spec, "--timeout", timeout);
            // with DJL_DIST_STORE_SECRET set, every client authenticates first; with the TLS
            // variables (DJL_DIST_STORE_TLS_*), every client starts TLS first
            String secret = System.getenv("DJL_DIST_STORE_SECRET");
            StoreTls tls = StoreTls.fromEnvironment();
            StoreRendezvousBench bench =
                    new StoreRendezvousBench(tcp.host(), tcp.port(), window, secret, tls);
            warmUp(bench, Math.min(clients, 2000), secret, tls);
            for (int r = 0; r < repeat; ++r) {
                double s = bench.run(clients, Long.toString(System.nanoTime(), 36), timeout);
                System.out.printf("store-rendezvous clients=%d seconds=%.3f%n", clients, s);
                System.out.flush();
            }
            return 0;
        }

        private void warmUp(StoreRendezvousBench bench, int n, String secret, StoreTls tls)
                throws InterruptedException {
            String runId = "warmup-" + System.nanoTime();
            switch (warmUp) {
                case NONE:
                    return;
                case SERVER:
                    bench.run(n, runId, timeout);
                    return;
                default:
                    // the private server serves with the settings and its clients connect with
                    // them: that takes a certificate and the authority; a client machine that
                    // holds the authority alone warms up without TLS
                    StoreTls localTls = tls != null && tls.servesAndConnects() ? tls : null;
                    if (tls != null && localTls == null) {
                        System.err.println(
                                "bench store-rendezvous: warming up locally without TLS (a local"
                                        + " TLS server needs "
                                        + StoreTls.CERT_ENV
                                        + " and "
                                        + StoreTls.KEY_ENV
                                        + " besides "
                                        + StoreTls.CA_ENV
                                        + "); --warm-up server warms the TLS path up");
                        System.err.flush();
                    }
                    try (TcpStoreServer server =
                            TcpStoreServer.builder()
                                    .optHost("127.0.0.1")
                                    .optSecret(secret)
                                    .optTls(localTls)
                                    .build()) {
                        new StoreRendezvousBench(
                                        "127.0.0.1", server.getPort(), window, secret, localTls)
                                .run(n, runId, timeout);
                    }
            }
        }
    }

    /** Where the rendezvous benchmark warms its JIT up (written in lower case on the line). */
    enum WarmUp {
        /** A private in-process server. */
        LOCAL,
        /** The measured server. */
        SERVER,
        /** No warm-up. */
        NONE
    }

    /** {@code bench store-ops}: K Java clients doing M rounds of set/get/add. */
    @Command(
            name = "store-ops",
            mixinStandardHelpOptions = true,
            description = "K Java clients doing M rounds of set/get/add")
    static final class StoreOps extends Server implements Callable<Integer> {

        @Spec CommandSpec spec;

        @Option(names = "--clients", paramLabel = "K", description = "clients; default 16")
        int clients = 16;

        @Option(names = "--rounds", paramLabel = "M", description = "rounds; default 500")
        int rounds = 500;

        @Option(names = "--repeat", paramLabel = "R", description = "measurements; default 1")
        int repeat = 1;

        /**
         * Runs the measurements; blocks until they end.
         *
         * @return 0
         * @throws Exception when a client fails
         */
        @Override
        public Integer call() throws Exception {
            atLeastOne(spec, "--clients", clients);
            atLeastOne(spec, "--rounds", rounds);
            atLeastOne(spec, "--repeat", repeat);
            for (int r = 0; r < repeat; ++r) {
                double ops = StoreOpsBench.run(tcp.host(), tcp.port(), clients, rounds);
                System.out.printf(
                        "store-ops clients=%d rounds=%d ops_per_s=%.0f%n", clients, rounds, ops);
                System.out.flush();
            }
            return 0;
        }
    }

    /** {@code bench collectives}: N local ranks; nccl-tests style lines. */
    @Command(
            name = "collectives",
            mixinStandardHelpOptions = true,
            description = "N local ranks (one JVM and one thread each); nccl-tests style lines")
    static final class Collectives implements Callable<Integer> {

        private static final List<String> OPS =
                List.of("all_reduce", "broadcast", "all_gather", "reduce_scatter", "all_to_all");

        /** The ops that split a message into one equal share per rank. */
        private static final List<String> SPLIT_OPS =
                List.of("all_gather", "reduce_scatter", "all_to_all");

        @Spec CommandSpec spec;

        @Option(
                names = {"--world-size", "--world_size"},
                paramLabel = "N",
                description = "ranks; default 2")
        int worldSize = 2;

        @Option(
                names = "--ops",
                paramLabel = "OPS",
                split = ",",
                description =
                        "all_reduce, broadcast, all_gather, reduce_scatter, all_to_all; default"
                                + " all_reduce,broadcast,all_gather")
        List<String> ops = List.of("all_reduce", "broadcast", "all_gather");

        @Option(
                names = "--sizes",
                paramLabel = "SIZES",
                split = ",",
                converter = SizeConverter.class,
                description = "message sizes such as 4096, 4K, 1M; default 4K,1M,16M,64M")
        List<Long> sizes = List.of(4L << 10, 1L << 20, 16L << 20, 64L << 20);

        @Option(
                names = "--transport",
                paramLabel = "KIND",
                description = "auto (default), tcp or shm")
        String transport = "auto";

        /**
         * Runs the benchmark; blocks until its ranks end.
         *
         * @return the ranks' exit status
         * @throws Exception when a rank cannot be started or waited for
         */
        @Override
        public Integer call() throws Exception {
            // checked here, not by each rank after it has started and loaded PyTorch
            atLeastOne(spec, "--world-size", worldSize);
            for (String op : ops) {
                if (!OPS.contains(op)) {
                    throw new ParameterException(
                            spec.commandLine(),
                            "--ops: '" + op + "' (expected: " + String.join(", ", OPS) + ")");
                }
            }
            if (!List.of("auto", "tcp", "shm").contains(transport)) {
                throw new ParameterException(
                        spec.commandLine(),
                        "--transport: '" + transport + "' (expected: auto, tcp or shm)");
            }
            checkSizes();
            return CollectivesBench.launch(worldSize, ops, sizes, transport);
        }

        /**
         * Refuses sizes the ranks cannot split: a message is float32 elements (4 bytes each), and
         * all_gather, reduce_scatter and all_to_all give each rank an equal share of them.
         */
        private void checkSizes() {
            for (long size : sizes) {
                if (size % 4 != 0) {
                    throw new ParameterException(
                            spec.commandLine(),
                            "--sizes: "
                                    + size
                                    + " (expected: a multiple of 4 bytes, whole float32"
                                    + " elements)");
                }
                for (String op : ops) {
                    long share = 4L * worldSize;
                    if (SPLIT_OPS.contains(op) && size % share != 0) {
                        throw new ParameterException(
                                spec.commandLine(),
                                "--sizes: "
                                        + size
                                        + " with "
                                        + op
                                        + " and --world-size "
                                        + worldSize
                                        + " (expected: a multiple of "
                                        + share
                                        + " bytes, 4 times the world size, so that each rank"
                                        + " gets whole float32 elements)");
                    }
                }
            }
        }
    }

    /** Reads a size such as 4K, 1M, 64M or 4096 into bytes. */
    static final class SizeConverter implements ITypeConverter<Long> {

        /** {@inheritDoc} */
        @Override
        public Long convert(String s) {
            String t = s.trim().toUpperCase(Locale.ROOT);
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
                long bytes = Math.multiplyExact(Long.parseLong(digits), unit);
                if (bytes > 0) {
                    return bytes;
                }
            } catch (NumberFormatException | ArithmeticException e) {
                // refused below
            }
            throw new TypeConversionException(
                    "'" + s + "' (expected: a positive number of bytes such as 4096, 4K, 1M, 64M)");
        }
    }
}
