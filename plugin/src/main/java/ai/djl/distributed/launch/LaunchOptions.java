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
package ai.djl.distributed.launch;

import picocli.CommandLine.ParseResult;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The validated command line of {@code bin/djlrun}: {@code djlrun [options] TARGET [args]}. Options
 * come first, as torchrun's do; the first word that is not an option is the TARGET and everything
 * after it belongs to the workers. Immutable.
 *
 * @param target the main class or example name, as given
 * @param targetArgs the workers' arguments
 * @param nprocPerNode the workers on this node, at least 1
 * @param nnodes the number of nodes, at least 1
 * @param nodeRank this node's rank, or -1 to be given one in joining order (with a rendezvous)
 * @param masterAddr the address of the agent store in a static rendezvous
 * @param masterPort its port; 0 picks a free one (one node only)
 * @param rdzvEndpoint the rendezvous endpoint, or {@code null} for a static rendezvous
 * @param rdzvId the job's id, TORCHELASTIC_RUN_ID
 * @param rdzvTimeout the longest wait for the other nodes
 * @param maxRestarts how many times the workers may be restarted
 * @param heartbeatTimeout how long another node's launcher may be silent before it counts as dead
 * @param monitorInterval how often the other nodes are polled
 * @param termTimeout the grace between SIGTERM and SIGKILL
 * @param role the workers' ROLE_NAME
 * @param jvmOpts the workers' JVM options
 * @param classpath the workers' classpath, or {@code null} for the launcher's
 * @param logLinePrefixTemplate the template of each output line's prefix
 */
record LaunchOptions(
        String target,
        List<String> targetArgs,
        int nprocPerNode,
        int nnodes,
        int nodeRank,
        String masterAddr,
        int masterPort,
        Endpoint rdzvEndpoint,
        String rdzvId,
        Duration rdzvTimeout,
        int maxRestarts,
        Duration heartbeatTimeout,
        Duration monitorInterval,
        Duration termTimeout,
        String role,
        List<String> jvmOpts,
        String classpath,
        String logLinePrefixTemplate) {

    /** torchrun's port for a static rendezvous of several nodes. */
    static final int DEFAULT_MULTI_NODE_PORT = 29500;

    /** The default prefix of every worker's output line. */
    static final String DEFAULT_PREFIX_TEMPLATE = "[rank${rank}]: ";

    /** torchrun's default join timeout of a rendezvous, in seconds. */
    static final int DEFAULT_RDZV_TIMEOUT_SECONDS = 600;

    /** The usage text printed by {@code --help}. */
    static final String USAGE = LaunchCommandLine.usage();

    /**
     * Checks the options against each other.
     *
     * @throws IllegalArgumentException naming the option and what was expected
     */
    LaunchOptions {
        targetArgs = List.copyOf(targetArgs);
        jvmOpts = List.copyOf(jvmOpts);
        if (target == null || target.isEmpty()) {
            throw new IllegalArgumentException(
                    "missing TARGET (expected: a main class, or one of the examples "
                            + String.join(", ", Targets.EXAMPLES.keySet())
                            + ")");
        }
        if (nodeRank >= nnodes) {
            throw new IllegalArgumentException(
                    "--node-rank: "
                            + nodeRank
                            + " (expected: 0 to "
                            + (nnodes - 1)
                            + ", below --nnodes "
                            + nnodes
                            + ")");
        }
        if (nnodes > 1 && rdzvEndpoint == null && nodeRank < 0) {
            throw new IllegalArgumentException(
                    "--node-rank: missing (expected: 0 to "
                            + (nnodes - 1)
                            + " with --nnodes "
                            + nnodes
                            + " and --master-addr/--master-port; or give every node"
                            + " --rdzv-endpoint HOST:PORT to number the nodes as they join)");
        }
        if (nnodes > 1 && rdzvEndpoint == null && masterPort == 0) {
            throw new IllegalArgumentException(
                    "--master-port: 0 (expected: 1 to 65535 with --nnodes "
                            + nnodes
                            + ": every node must know the port)");
        }
    }

    /**
     * Returns whether the command line asks for help ({@code -h} or {@code --help} before the
     * TARGET).
     *
     * @param args the command line
     * @return {@code true} if the usage should be printed; {@code false} also when the command line
     *     cannot be read, which {@link #parse} then reports
     */
    static boolean wantsHelp(List<String> args) {
        try {
            return LaunchCommandLine.parse(args, Map.of()).isUsageHelpRequested();
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    /**
     * Parses and validates a command line.
     *
     * @param args the command line, without the program name
     * @param env the environment, for torchrun's {@code PET_*} variables and this project's
     * @return the options
     * @throws IllegalArgumentException naming the first bad option, its value and what was expected
     */
    static LaunchOptions parse(List<String> args, Map<String, String> env) {
        ParseResult parsed = LaunchCommandLine.parse(args, env);
        List<String> rest = parsed.matchedPositionalValue(0, List.<String>of());
        String target = rest.isEmpty() ? null : rest.get(0);
        List<String> targetArgs = rest.isEmpty() ? List.of() : rest.subList(1, rest.size());
        OptionValues v = new OptionValues(parsed);
        int nnodes = v.nnodes();
        Endpoint rdzv = v.endpoint(LaunchOption.RDZV_ENDPOINT);
        if (v.has(LaunchOption.STANDALONE) && (nnodes > 1 || rdzv != null)) {
            // name where the conflicting value came from: a PET_NNODES of the environment, say
            String nodes = nnodes > 1 ? v.source(LaunchOption.NNODES) : "--nnodes";
            String endpoint =
                    rdzv != null ? v.source(LaunchOption.RDZV_ENDPOINT) : "--rdzv-endpoint";
            throw new IllegalArgumentException(
                    "--standalone: runs one node, but "
                            + (nnodes > 1 ? nodes + " is " + nnodes : endpoint + " is " + rdzv)
                            + " (expected: no "
                            + nodes
                            + " above 1 and no "
                            + endpoint
                            + ")");
        }
        int defaultPort = nnodes > 1 ? DEFAULT_MULTI_NODE_PORT : 0;
        String prefix = v.string(LaunchOption.LOG_LINE_PREFIX_TEMPLATE, DEFAULT_PREFIX_TEMPLATE);
        String jvmOpts = v.string(LaunchOption.JVM_OPTS, "").trim();
        Duration heartbeatTimeout = v.seconds(LaunchOption.HEARTBEAT_TIMEOUT, 30);
        Duration monitorInterval = v.seconds(LaunchOption.MONITOR_INTERVAL, 0.1);
        checkHeartbeats(nnodes, heartbeatTimeout, monitorInterval);
        return new LaunchOptions(
                target,
                targetArgs,
                v.nprocPerNode(),
                nnodes,
                v.integer(LaunchOption.NODE_RANK, -1, 0, Integer.MAX_VALUE),
                v.string(LaunchOption.MASTER_ADDR, "127.0.0.1"),
                v.integer(LaunchOption.MASTER_PORT, defaultPort, 0, 65535),
                rdzv,
                v.string(LaunchOption.RDZV_ID, "none"),
                v.seconds(LaunchOption.RDZV_TIMEOUT, DEFAULT_RDZV_TIMEOUT_SECONDS),
                v.integer(LaunchOption.MAX_RESTARTS, 0, 0, Integer.MAX_VALUE),
                heartbeatTimeout,
                monitorInterval,
                v.seconds(LaunchOption.TERM_TIMEOUT, 30),
                v.string(LaunchOption.ROLE, "default"),
                jvmOpts.isEmpty() ? List.of() : Arrays.asList(jvmOpts.split("\\s+")),
                v.string(LaunchOption.CLASSPATH, null),
                prefix);
    }

    /**
     * A launcher beats as often as it polls, at most once a second, and reads the others' beats as
     * often: a heartbeat timeout under two such periods would find healthy nodes dead.
     */
    private static void checkHeartbeats(int nnodes, Duration timeout, Duration interval) {
        Duration period =
                interval.compareTo(Heartbeats.INTERVAL) > 0 ? interval : Heartbeats.INTERVAL;
        if (nnodes > 1 && timeout.compareTo(period.multipliedBy(2)) < 0) {
            throw new IllegalArgumentException(
                    "--heartbeat-timeout: "
                            + seconds(timeout)
                            + " s with --monitor-interval "
                            + seconds(interval)
                            + " s (expected: at least two heartbeats, "
                            + seconds(period.multipliedBy(2))
                            + " s: a launcher beats once per interval, at most once a second)");
        }
    }

    private static String seconds(Duration d) {
        return java.math.BigDecimal.valueOf(d.toNanos(), 9).stripTrailingZeros().toPlainString();
    }
}
