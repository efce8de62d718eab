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

import java.util.Arrays;
import java.util.List;

/** The entry point of {@code bin/djl-dist}: dispatches to a subcommand. */
public final class Main {

    static final String USAGE =
            String.join(
                    "\n",
                    "usage: djl-dist COMMAND [options]",
                    "",
                    "commands:",
                    "  store-server --host H --port P [--world-size N] [--io-threads T] [--warm-up-ms 1500]"
                            + " [--busy-poll-us 50]",
                    "      a TcpStore server in the foreground; prints 'listening on H:P'",
                    "  store (--tcp H:P | --file PATH) [--prefix P] [--timeout SECONDS] OP",
                    "      OP: get KEY | set KEY VALUE | add KEY N | wait KEY... | check KEY...",
                    "          | delete KEY | num-keys",
                    "  demo [--clients N]",
                    "      starts a store server and N client threads that rendezvous on it",
                    "  bench store-rendezvous --tcp H:P --clients N [--repeat R] [--window W]"
                            + " [--warm-up local|server|none]",
                    "      N simultaneous raw clients: connect, add to a counter, wait for the last"
                            + " (each authenticates first when DJL_DIST_STORE_SECRET is set)",
                    "  bench store-ops --tcp H:P --clients K --rounds M",
                    "      K Java clients doing M rounds of set/get/add",
                    "  bench collectives --world-size N [--ops all_reduce,broadcast,all_gather,"
                            + "reduce_scatter,all_to_all] [--sizes 4K,1M,16M,64M]"
                            + " [--transport auto|tcp|shm]",
                    "      N local ranks (one JVM and one thread each); nccl-tests style lines");

    private Main() {}

    /**
     * Runs a subcommand and exits with its status.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(Arrays.asList(args)));
    }

    /**
     * Runs a subcommand.
     *
     * @param args the command line
     * @return the exit status: 0 on success, 1 on failure, 2 on bad usage
     */
    public static int run(List<String> args) {
        if (args.isEmpty() || args.get(0).equals("--help") || args.get(0).equals("-h")) {
            System.out.println(USAGE);
            return args.isEmpty() ? 2 : 0;
        }
        List<String> rest = args.subList(1, args.size());
        try {
            switch (args.get(0)) {
                case "store-server":
                    return StoreServerCommand.run(rest);
                case "store":
                    return StoreCommand.run(rest);
                case "demo":
                    return DemoCommand.run(rest);
                case "bench":
                    return BenchCommand.run(rest);
                default:
                    throw new Args.UsageException("unknown command '" + args.get(0) + "'");
            }
        } catch (Args.UsageException e) {
            System.err.println("djl-dist: " + e.getMessage());
            System.err.println(USAGE);
            return 2;
        } catch (RuntimeException e) {
            System.err.println("djl-dist: " + e.getMessage());
            return 1;
        }
    }
}
