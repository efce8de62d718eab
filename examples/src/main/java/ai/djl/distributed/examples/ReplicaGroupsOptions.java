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
package ai.djl.distributed.examples;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.TypeConversionException;

import java.time.Duration;

/**
 * The command line of {@code replica_groups}: {@code --name value} (or {@code --name=value}) pairs,
 * read by picocli. {@code --replica-id}, {@code --num-replicas} and {@code --main-store} are
 * required, the rest optional. Immutable once parsed.
 */
public final class ReplicaGroupsOptions {

    private static final String SYNOPSIS =
            "usage: replica_groups --replica-id I --num-replicas N --main-store HOST:PORT"
                    + " [options]";

    /** The default of {@code --timeout}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(300);

    /** The command line, its defaults and meaning, as {@code --help} prints them. */
    public static final String USAGE =
            ExampleCommandLine.usage(new ReplicaGroupsOptions(), SYNOPSIS);

    @Option(names = "--replica-id", paramLabel = "I", description = "this job's replica: 0 to N-1")
    private int replicaId = -1;

    @Option(
            names = "--num-replicas",
            paramLabel = "N",
            description = "how many replicas (jobs) meet")
    private int numReplicas = -1;

    @Option(
            names = "--main-store",
            paramLabel = "HOST:PORT",
            description =
                    "the store the replicas share; the hosting replica serves it there (port 0: a"
                            + " free one, printed)")
    private String mainStore;

    @Option(
            names = "--host-main-store",
            paramLabel = "B",
            arity = "1",
            converter = TrueOrFalse.class,
            description =
                    "whether this replica serves the main store: true or false (default: true for"
                            + " replica 0 only; false for all when another process serves it)")
    private Boolean hostMainStore;

    @Option(
            names = "--backend",
            paramLabel = "NAME",
            description = "the backend of every group (default cpu)")
    private String backend = "cpu";

    @Option(
            names = "--timeout",
            paramLabel = "S",
            description =
                    "seconds to wait for the other replicas, and the bound of each cross-replica"
                            + " operation (default 300)")
    private double timeoutSeconds = DEFAULT_TIMEOUT.toSeconds();

    private String mainStoreHost;
    private int mainStorePort = -1;
    private Duration timeout = DEFAULT_TIMEOUT;

    private ReplicaGroupsOptions() {}

    /**
     * Parses the command line.
     *
     * @param args the arguments
     * @return the options
     * @throws IllegalArgumentException on an unknown option, a missing, malformed or inconsistent
     *     value
     */
    public static ReplicaGroupsOptions parse(String... args) {
        ReplicaGroupsOptions o =
                ExampleCommandLine.parse(new ReplicaGroupsOptions(), SYNOPSIS, args);
        if (o.mainStore != null) {
            o.mainStore(o.mainStore);
        }
        o.timeout = seconds("--timeout", o.timeoutSeconds);
        o.check();
        return o;
    }

    /** Reads {@code true} or {@code false}, and nothing else. */
    static final class TrueOrFalse implements ITypeConverter<Boolean> {

        /** {@inheritDoc} */
        @Override
        public Boolean convert(String value) {
            if (!value.equals("true") && !value.equals("false")) {
                throw new TypeConversionException("true or false");
            }
            return Boolean.parseBoolean(value);
        }
    }

    // HOST:PORT, or [IPv6]:PORT.
    private void mainStore(String value) {
        int colon = value.lastIndexOf(':');
        String host = colon > 0 ? value.substring(0, colon) : "";
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        String digits = value.substring(colon + 1);
        int port = digits.matches("[0-9]{1,5}") ? Integer.parseInt(digits) : -1;
        if (host.isEmpty() || port < 0 || port > 65535) {
            throw new IllegalArgumentException(
                    "--main-store: "
                            + value
                            + " (expected: HOST:PORT with a port from 0 to 65535, e.g."
                            + " 127.0.0.1:29600)");
        }
        mainStoreHost = host;
        mainStorePort = port;
    }

    private void check() {
        if (numReplicas < 1) {
            throw new IllegalArgumentException(
                    "--num-replicas: " + numReplicas + " (expected: given, at least 1)");
        }
        if (replicaId < 0 || replicaId >= numReplicas) {
            throw new IllegalArgumentException(
                    "--replica-id: "
                            + replicaId
                            + " (expected: given, from 0 to "
                            + (numReplicas - 1)
                            + ")");
        }
        if (mainStoreHost == null) {
            throw new IllegalArgumentException(
                    "--main-store: missing (expected: HOST:PORT, the same for every replica)");
        }
        if (mainStorePort == 0 && !hostsMainStore()) {
            throw new IllegalArgumentException(
                    "--main-store: port 0 (expected: the port the hosting replica serves on; only"
                            + " the host may pick a free one)");
        }
    }

    private static Duration seconds(String name, double s) {
        if (!(s > 0) || s > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(name + ": " + s + " (expected: > 0 seconds)");
        }
        return Duration.ofMillis(Math.max(1, Math.round(s * 1000)));
    }

    /**
     * Returns this job's replica: its rank in the cross-replica group.
     *
     * @return from 0 to {@link #numReplicas()} - 1
     */
    public int replicaId() {
        return replicaId;
    }

    /**
     * Returns the number of replicas: the size of the cross-replica group.
     *
     * @return at least 1
     */
    public int numReplicas() {
        return numReplicas;
    }

    /**
     * Returns the main store's host: where it is served, and where the replicas reach it.
     *
     * @return a host name or address
     */
    public String mainStoreHost() {
        return mainStoreHost;
    }

    /**
     * Returns the main store's port; 0 (host only) picks a free one.
     *
     * @return 0 to 65535
     */
    public int mainStorePort() {
        return mainStorePort;
    }

    /**
     * Returns whether this replica's rank 0 serves the main store.
     *
     * @return {@code --host-main-store}, by default whether this is replica 0
     */
    public boolean hostsMainStore() {
        return hostMainStore != null ? hostMainStore : replicaId == 0;
    }

    /**
     * Returns the backend of the replica's world and of the cross-replica group.
     *
     * @return a backend's name, e.g. "cpu"
     */
    public String backend() {
        return backend;
    }

    /**
     * Returns the longest wait for the other replicas, and the bound of each cross-replica
     * operation.
     *
     * @return a positive duration
     */
    public Duration timeout() {
        return timeout;
    }
}
