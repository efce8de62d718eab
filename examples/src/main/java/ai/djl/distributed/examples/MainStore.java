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

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.StoreTimeoutException;
import ai.djl.distributed.store.tcp.TcpStore;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The store the replicas share, as one replica's leader (its rank 0) sees it: served by this
 * process when the replica hosts it, else reached over TCP. The replicas meet under {@value
 * #PREFIX}/: {@code arrived/I} (replica I's world size) and {@code done/I} per replica, beside the
 * cross-replica group's own keys ({@code default_pg/...}).
 *
 * <p>The host's server must outlive every replica's use of it, so each leader marks {@code done/I}
 * once it no longer needs the store, and the host waits for every mark ({@link #awaitFinished()})
 * before {@link #close()} stops the server. Every wait is bounded by {@code --timeout}.
 *
 * <p>Used by one thread.
 */
final class MainStore implements AutoCloseable {

    /** The prefix of every key the replicas share in the main store. */
    static final String PREFIX = "replicas";

    private final ReplicaGroupsOptions options;
    private final long deadline;
    private final TcpStore tcp;
    private final Store replicas;

    private MainStore(ReplicaGroupsOptions options, long deadline, TcpStore tcp) {
        this.options = options;
        this.deadline = deadline;
        this.tcp = tcp;
        this.replicas = new PrefixStore(PREFIX, tcp);
    }

    /**
     * Serves the main store (when this replica hosts it) and connects to it; a client retries until
     * the server is up. The timeout starts here: it bounds this call and {@link #arrive} together.
     *
     * @param options the replica's options
     * @return the connected store
     * @throws DistributedException if it cannot be served, or does not answer in time
     */
    static MainStore join(ReplicaGroupsOptions options) {
        String at = options.mainStoreHost() + ":" + options.mainStorePort();
        long deadline = System.nanoTime() + options.timeout().toNanos();
        try {
            return new MainStore(
                    options,
                    deadline,
                    TcpStore.builder()
                            .setHost(options.mainStoreHost())
                            .setPort(options.mainStorePort())
                            .optServer(options.hostsMainStore())
                            .optWaitForWorkers(false)
                            .optTimeout(options.timeout())
                            .build());
        } catch (StoreException e) {
            String why =
                    options.hostsMainStore()
                            ? "cannot serve the main store on " + at
                            : "the main store at "
                                    + at
                                    + " did not answer within "
                                    + seconds(options)
                                    + " (expected: the hosting replica, replica 0 unless"
                                    + " --host-main-store says otherwise, serving it there)";
            throw new DistributedException(replica(options) + why + ": " + e.getMessage(), e);
        }
    }

    /**
     * Returns the store the cross-replica group is created on: the main store under {@value
     * #PREFIX}/.
     *
     * @return the prefixed store; owned by this object
     */
    Store replicas() {
        return replicas;
    }

    /**
     * Returns where the main store is: its host and its real port (the one picked for port 0).
     *
     * @return {@code host:port}
     */
    String endpoint() {
        return tcp.getHost() + ":" + tcp.getPort();
    }

    /**
     * Announces this replica and blocks until every replica has, until the timeout that started at
     * {@link #join}; checks that every replica runs as many ranks as this one.
     *
     * @param worldSize this replica's number of ranks
     * @throws DistributedException naming the replicas that did not come, or one of another size
     */
    void arrive(int worldSize) {
        replicas.set("arrived/" + options.replicaId(), bytes(worldSize));
        awaitAll(
                "arrived",
                Duration.ofNanos(Math.max(1_000_000, deadline - System.nanoTime())),
                "did not join",
                "expected: a job for each --replica-id from 0 to "
                        + (options.numReplicas() - 1)
                        + ", all with --num-replicas "
                        + options.numReplicas()
                        + " and --main-store "
                        + endpoint());
        for (int r = 0; r < options.numReplicas(); r++) {
            int size = Integer.parseInt(text(replicas.get("arrived/" + r)));
            if (size != worldSize) {
                throw new DistributedException(
                        replica(options)
                                + "replica "
                                + r
                                + " runs "
                                + size
                                + " rank(s), this one "
                                + worldSize
                                + " (expected: the same --nproc-per-node for every replica)");
            }
        }
    }

    /** Marks that this replica no longer needs the main store. */
    void finish() {
        replicas.set("done/" + options.replicaId(), bytes(1));
    }

    /**
     * Blocks until every replica has {@link #finish() finished} with the store, for at most the
     * timeout: the host calls it before closing the server.
     *
     * @throws DistributedException naming the replicas that did not finish
     */
    void awaitFinished() {
        awaitAll(
                "done",
                options.timeout(),
                "did not finish with the main store",
                "main store " + endpoint());
    }

    private void awaitAll(String mark, Duration timeout, String failure, String details) {
        List<String> keys = new ArrayList<>();
        for (int r = 0; r < options.numReplicas(); r++) {
            keys.add(mark + "/" + r);
        }
        try {
            replicas.waitFor(keys, timeout);
        } catch (StoreTimeoutException e) {
            List<Integer> missing = new ArrayList<>();
            for (int r = 0; r < keys.size(); r++) {
                if (!replicas.check(List.of(keys.get(r)))) {
                    missing.add(r);
                }
            }
            throw new DistributedException(
                    replica(options)
                            + (missing.size() == 1 ? "replica " : "replicas ")
                            + missing.stream()
                                    .map(String::valueOf)
                                    .collect(Collectors.joining(", "))
                            + " "
                            + failure
                            + " within "
                            + seconds(options)
                            + " ("
                            + details
                            + ")",
                    e);
        }
    }

    /** Closes the connection; on the host, stops the server. Idempotent. */
    @Override
    public void close() {
        tcp.close();
    }

    private static String replica(ReplicaGroupsOptions options) {
        return "replica " + options.replicaId() + ": ";
    }

    private static String seconds(ReplicaGroupsOptions options) {
        return BigDecimal.valueOf(options.timeout().toMillis(), 3)
                        .stripTrailingZeros()
                        .toPlainString()
                + " s";
    }

    private static byte[] bytes(int value) {
        return Integer.toString(value).getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] value) {
        return new String(value, StandardCharsets.UTF_8);
    }
}
