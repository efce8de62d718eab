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

import java.time.Duration;
import java.util.Set;

/**
 * The command line of {@code replica_groups}: {@code --name value} (or {@code --name=value}) pairs.
 * {@code --replica-id}, {@code --num-replicas} and {@code --main-store} are required, the rest
 * optional. Immutable once parsed.
 */
public final class ReplicaGroupsOptions {

    /** The command line, its defaults and meaning, as {@code --help} prints them. */
    public static final String USAGE =
            String.join(
                    "\n",
                    "usage: replica_groups --replica-id I --num-replicas N --main-store HOST:PORT"
                            + " [options]",
                    "  --replica-id I          this job's replica: 0 to N-1",
                    "  --num-replicas N        how many replicas (jobs) meet",
                    "  --main-store HOST:PORT  the store the replicas share; the hosting replica"
                            + " serves it",
                    "                          there (port 0: a free one, printed)",
                    "  --host-main-store B     whether this replica serves the main store: true"
                            + " or false",
                    "                          (default: true for replica 0 only; false for all"
                            + " when",
                    "                          another process serves it)",
                    "  --backend NAME          the backend of every group (default cpu)",
                    "  --timeout S             seconds to wait for the other replicas, and the"
                            + " bound of",
                    "                          each cross-replica operation (default 300)");

    /** The default of {@code --timeout}. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(300);

    private int replicaId = -1;
    private int numReplicas = -1;
    private String mainStoreHost;
    private int mainStorePort = -1;
    private Boolean hostMainStore;
    private String backend = "cpu";
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
        ReplicaGroupsOptions o = new ReplicaGroupsOptions();
        OptionPairs.parse(args, Set.of(), o::set);
        o.check();
        return o;
    }

    private void set(String name, String value) {
        try {
            switch (name) {
                case "--replica-id" -> replicaId = Integer.parseInt(value);
                case "--num-replicas" -> numReplicas = Integer.parseInt(value);
                case "--main-store" -> mainStore(value);
                case "--host-main-store" -> hostMainStore = bool(name, value);
                case "--backend" -> backend = value;
                case "--timeout" -> timeout = seconds(name, Double.parseDouble(value));
                default ->
                        throw new IllegalArgumentException(
                                "unknown option: " + name + "\n" + USAGE);
            }
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: a number)", e);
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

    private static boolean bool(String name, String value) {
        if (!value.equals("true") && !value.equals("false")) {
            throw new IllegalArgumentException(name + ": " + value + " (expected: true or false)");
        }
        return Boolean.parseBoolean(value);
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
