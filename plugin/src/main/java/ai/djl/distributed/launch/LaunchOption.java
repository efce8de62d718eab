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

import picocli.CommandLine.Model.OptionSpec;

import java.util.Locale;
import java.util.Optional;

/**
 * The options of {@code bin/djlrun}, named as torchrun names them ({@code --nproc-per-node} and
 * {@code --nproc_per_node}): the table from which {@link LaunchCommandLine} builds picocli's
 * command. Each option may also come from an environment variable, as torchrun's do ({@code
 * PET_NPROC_PER_NODE}, ...): the command line wins over the variable, which wins over the default.
 */
enum LaunchOption {
    NPROC_PER_NODE(
            "nproc-per-node",
            "N",
            "workers on this node: a number; gpu (one per GPU), cpu (one per core), or auto (gpu"
                    + " where there are GPUs, else cpu); default 1"),
    NNODES("nnodes", "N", "number of nodes, one launcher each; default 1"),
    NODE_RANK(
            "node-rank",
            "K",
            "this node's rank, 0 to N-1: needed with --nnodes N > 1 and --master-addr/port;"
                    + " with --rdzv-endpoint, given in joining order when left out"),
    MASTER_ADDR(
            "master-addr",
            "HOST",
            "address of node 0, whose launcher serves the agent store; default 127.0.0.1"),
    MASTER_PORT(
            "master-port",
            "PORT",
            "port of the agent store; default: a free one on one node, 29500 on several"),
    RDZV_ENDPOINT(
            "rdzv-endpoint",
            "HOST:PORT",
            "multi-node rendezvous on a TcpStore there: the launcher on HOST serves it (or a"
                    + " bin/djl-dist store-server does); workers use it as MASTER_ADDR:PORT"),
    RDZV_ID("rdzv-id", "ID", "the job's id: TORCHELASTIC_RUN_ID and the agents' key prefix"),
    RDZV_TIMEOUT(
            "rdzv-timeout",
            "SECONDS",
            "longest wait for the other nodes at start and at each restart (at exit, a node waits"
                    + " as long as the others' heartbeats go on); default 600"),
    MAX_RESTARTS(
            "max-restarts",
            "N",
            "restarts of all workers (of every node) after a worker fails; default 0"),
    HEARTBEAT_TIMEOUT(
            "heartbeat-timeout",
            "SECONDS",
            "another node counts as dead when its launcher's heartbeat (one a second) stops for"
                    + " this long, and the agent store as lost when a launcher's call to it takes"
                    + " longer; default 30"),
    MONITOR_INTERVAL(
            "monitor-interval", "SECONDS", "how often the other nodes are polled; default 0.1"),
    TERM_TIMEOUT(
            "term-timeout",
            "SECONDS",
            "grace between SIGTERM and SIGKILL when workers are stopped; default 30"),
    ROLE("role", "NAME", "ROLE_NAME of the workers; default 'default'"),
    JVM_OPTS("jvm-opts", "OPTIONS", "JVM options of the workers, split at white space"),
    CLASSPATH("classpath", "PATH", "the workers' classpath; default: the launcher's own"),
    LOG_LINE_PREFIX_TEMPLATE(
            "log-line-prefix-template",
            "TEMPLATE",
            "prefix of every worker line, with ${rank}, ${local_rank} and ${role_name};"
                    + " default '[rank${rank}]: ', '' for none"),
    STANDALONE("standalone", null, "one node on a free port: the default with --nnodes 1"),
    HELP("help", null, "prints this help");

    private final String name;
    private final String metavar;
    private final String help;

    LaunchOption(String name, String metavar, String help) {
        this.name = name;
        this.metavar = metavar;
        this.help = help;
    }

    /**
     * Returns the option's name without dashes, as written in the usage.
     *
     * @return e.g. {@code nproc-per-node}
     */
    String optionName() {
        return name;
    }

    /**
     * Returns whether the option takes a value.
     *
     * @return {@code false} for flags
     */
    boolean takesValue() {
        return metavar != null;
    }

    /**
     * Returns the environment variable that sets this option when the command line does not.
     *
     * @return torchrun's {@code PET_*} name, or this project's for the JVM's options
     */
    Optional<String> environmentVariable() {
        switch (this) {
            case HELP:
            case STANDALONE:
                return Optional.empty();
            case JVM_OPTS:
                return Optional.of("DJL_DIST_JAVA_OPTS");
            case CLASSPATH:
                return Optional.of("DJL_DIST_CLASSPATH");
            case LOG_LINE_PREFIX_TEMPLATE:
                return Optional.of("TORCHELASTIC_LOG_LINE_PREFIX_TEMPLATE");
            default:
                return Optional.of("PET_" + name.replace('-', '_').toUpperCase(Locale.ROOT));
        }
    }

    /**
     * Finds an option by its name, accepting torchrun's underscore spellings too.
     *
     * @param name the name without dashes, e.g. {@code nproc_per_node}
     * @return the option, if there is one of that name
     */
    static Optional<LaunchOption> byName(String name) {
        String dashed = name.replace('_', '-');
        for (LaunchOption o : values()) {
            if (o.name.equals(dashed)) {
                return Optional.of(o);
            }
        }
        return Optional.empty();
    }

    /**
     * Describes the option for picocli: its dashed name and, for a multi-word name, torchrun's
     * underscore spelling too; a value as a string, read by {@link OptionValues}.
     *
     * @return the option's picocli description, not shared
     */
    OptionSpec spec() {
        String dashed = "--" + name;
        String underscored = dashed.substring(0, 2) + name.replace('-', '_');
        String[] names =
                this == HELP
                        ? new String[] {"-h", dashed}
                        : dashed.equals(underscored)
                                ? new String[] {dashed}
                                : new String[] {dashed, underscored};
        String text = help + environmentVariable().map(v -> " [$" + v + "]").orElse("");
        OptionSpec.Builder b = OptionSpec.builder(names).description(text).usageHelp(this == HELP);
        if (metavar == null) {
            return b.arity("0").type(boolean.class).build();
        }
        return b.arity("1").type(String.class).paramLabel(metavar).build();
    }

    /**
     * Finds the option a picocli option describes.
     *
     * @param spec an option made by {@link #spec()}
     * @return the option
     */
    static LaunchOption of(OptionSpec spec) {
        return byName(spec.longestName().replaceFirst("^-+", ""))
                .orElseThrow(() -> new IllegalArgumentException("not a djlrun option: " + spec));
    }
}
