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

import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The agent store and the nodes' meeting in it. One launcher serves a {@link TcpStoreServer}, which
 * the launchers of all nodes and all their workers use, as torchrun's agent store:
 *
 * <ul>
 *   <li>one node: this launcher, on {@code --master-addr:--master-port} (port 0: a free one);
 *   <li>several nodes, static: node 0's launcher, on every interface at {@code --master-port};
 *   <li>several nodes, {@code --rdzv-endpoint HOST:PORT}: the first launcher on HOST to bind PORT
 *       (the others, and every other node, connect to it); a {@code djl-dist store-server} there
 *       serves as well.
 * </ul>
 *
 * <p>Node ranks are {@code --node-rank}, or given in joining order by an atomic counter; each rank
 * is claimed once, so two nodes can never share one. The launchers' keys live under {@code
 * djlrun/RUN_ID/}. Connecting and every wait are bounded by {@code --rdzv-timeout}, and a barrier
 * ends early when a node gives up (its launcher was stopped). Each store call is bounded by {@code
 * --heartbeat-timeout} (or {@code --rdzv-timeout} if shorter): none waits in the store (barriers
 * poll), so a call that takes longer means the serving node hangs or is cut off, and it then fails
 * as a lost store, as soon as a silent heartbeat would. Used by one thread.
 */
final class NodeRendezvous implements AutoCloseable {

    // The start barrier: round 0's.
    private static final String START = "round/0";
    // The start's abort key: a node that gives up before the first round sets it. It is round 0's
    // event too, which ends the running attempt: only a node of the job may set it.
    private static final String START_ABORT = START + "/event";
    // The start barrier's go key. The last node to come sets it to GO, and a launcher refused at
    // the start to its verdict, each by a compare-and-set: the first one stands.
    private static final String START_GO = START + "/go"; // as barrier() names it
    private static final byte[] GO = "1".getBytes(StandardCharsets.UTF_8);

    private static final Duration LEAVE_TIMEOUT = Duration.ofSeconds(10);

    private final LaunchOptions options;
    private final TcpStoreServer server;
    private final TcpStore client;
    private final Store store;
    private final Endpoint endpoint;
    private final String clientHost;

    private NodeRendezvous(
            LaunchOptions options, TcpStoreServer server, Endpoint endpoint, String clientHost) {
        this.options = options;
        this.server = server;
        this.endpoint = endpoint;
        this.clientHost = clientHost;
        try {
            client = AgentStores.connect(clientHost, endpoint.port(), options.rdzvTimeout());
            client.setTimeout(callTimeout(options));
        } catch (RuntimeException e) {
            if (server != null) {
                server.close();
            }
            throw e;
        }
        store = new PrefixStore(keyPrefix(options), client);
    }

    /**
     * Serves the agent store or connects to it, as the options say.
     *
     * @param options the launch options
     * @return the rendezvous, connected
     * @throws LaunchException if the store cannot be served or reached within the timeout
     */
    static NodeRendezvous open(LaunchOptions options) {
        Endpoint rdzv = options.rdzvEndpoint();
        if (rdzv != null) {
            TcpStoreServer server = AgentStores.tryServe(rdzv);
            String host = server != null ? AgentStores.clientHost(rdzv.host()) : rdzv.host();
            return new NodeRendezvous(options, server, rdzv, host);
        }
        if (options.nnodes() == 1) {
            TcpStoreServer server =
                    AgentStores.serve(options.masterAddr(), options.masterPort(), "");
            Endpoint ep = new Endpoint(options.masterAddr(), server.getPort());
            return new NodeRendezvous(options, server, ep, options.masterAddr());
        }
        Endpoint ep = new Endpoint(options.masterAddr(), options.masterPort());
        if (options.nodeRank() == 0) {
            TcpStoreServer server = AgentStores.serve("0.0.0.0", ep.port(), " (node 0 serves it)");
            return new NodeRendezvous(options, server, ep, "127.0.0.1");
        }
        return new NodeRendezvous(options, null, ep, ep.host());
    }

    /**
     * Returns the bound of each of the launchers' store calls once connected: {@code
     * --heartbeat-timeout}, or {@code --rdzv-timeout} if shorter or if this is the only node. A
     * launcher's calls never wait in the store (barriers poll), so one that takes longer means the
     * serving node hangs or is cut off; the call then fails, as a lost store, instead of holding
     * the launcher (and its watch on its own workers) for {@code --rdzv-timeout}.
     *
     * @param options the launch options
     * @return the bound
     */
    static Duration callTimeout(LaunchOptions options) {
        if (options.nnodes() == 1) {
            // no other node, and no heartbeat (nor a checked --heartbeat-timeout) to bound it by
            return options.rdzvTimeout();
        }
        Duration heartbeat = options.heartbeatTimeout();
        return heartbeat.compareTo(options.rdzvTimeout()) < 0 ? heartbeat : options.rdzvTimeout();
    }

    /**
     * Returns the key prefix of the launchers' keys.
     *
     * @param options the launch options
     * @return {@code djlrun/RUN_ID}
     */
    static String keyPrefix(LaunchOptions options) {
        return "djlrun/" + options.rdzvId();
    }

    /**
     * Returns the store, as every node reaches it: MASTER_ADDR and MASTER_PORT of the workers.
     *
     * @return the endpoint
     */
    Endpoint endpoint() {
        return endpoint;
    }

    /**
     * Returns the host this launcher connects to (loopback when it serves on every interface).
     *
     * @return the host
     */
    String clientHost() {
        return clientHost;
    }

    /**
     * Returns the launchers' view of the store: keys under {@code djlrun/RUN_ID/}.
     *
     * @return the store
     */
    Store store() {
        return store;
    }

    /**
     * Returns whether this launcher serves the store.
     *
     * @return {@code true} for the serving node
     */
    boolean serves() {
        return server != null;
    }

    /**
     * Claims a node rank, publishes this node's worker count and waits for every node; blocks up to
     * {@code --rdzv-timeout}.
     *
     * @return this node's place among the nodes
     * @throws LaunchException if the rank is taken, too many nodes came, not all came in time, or
     *     one gave up
     * @throws InterruptedException if interrupted
     */
    NodeAssignment assign() throws InterruptedException {
        int n = options.nnodes();
        checkNodeCount();
        int rank = claimRank();
        store.set("node/" + rank, Integer.toString(options.nprocPerNode()));
        Optional<byte[]> abort = barrier(START, "the start", START_ABORT, Optional::empty);
        if (abort.isPresent()) {
            throw new LaunchException(RestartRounds.Event.decode(abort.get()).message());
        }
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < n; ++i) {
            keys.add("node/" + i);
        }
        List<byte[]> counts = store.multiGet(keys);
        int base = 0;
        int world = 0;
        for (int i = 0; i < n; ++i) {
            int nproc = Integer.parseInt(new String(counts.get(i), StandardCharsets.UTF_8));
            base += i < rank ? nproc : 0;
            world += nproc;
        }
        return new NodeAssignment(
                rank, n, base, world, options.nprocPerNode(), endpoint.host(), endpoint.port());
    }

    /**
     * Waits until every node has reached the same barrier, or a node has given up and set {@code
     * abortKey}, or {@code failure} names a reason to give up (a node found dead, which will never
     * come), which is then posted to {@code abortKey} for every node; polls every {@code
     * --monitor-interval} for at most {@code --rdzv-timeout}.
     *
     * @param name the barrier's key
     * @param what what the nodes meet for, for the message
     * @param abortKey the key a node that gives up sets
     * @param failure asked at each poll; a reason to give up, or empty
     * @return the abort key's value if a node gave up, or the go key's if a launcher refused at the
     *     start closed the barrier (see {@link #checkNodeCount()}), else empty once all nodes came
     * @throws LaunchException naming how many nodes came if not all came in time, or if the store
     *     is lost
     * @throws InterruptedException if interrupted
     */
    Optional<byte[]> barrier(
            String name, String what, String abortKey, Supplier<Optional<String>> failure)
            throws InterruptedException {
        int n = options.nnodes();
        List<String> go = List.of(name + "/go");
        try {
            if (store.add(name + "/joined", 1) == n) {
                // not a set: a launcher refused at the start may have closed the barrier first
                store.compareSet(go.get(0), new byte[0], GO);
            }
            long deadline = System.nanoTime() + options.rdzvTimeout().toNanos();
            while (!store.check(go)) {
                if (store.check(List.of(abortKey))) {
                    return Optional.of(store.get(abortKey));
                }
                Optional<String> why = failure.get();
                if (why.isPresent()) {
                    // the first event posted stands, for every node
                    RestartRounds.Event event =
                            new RestartRounds.Event(RestartRounds.Kind.FAILURE, why.get());
                    return Optional.of(store.compareSet(abortKey, new byte[0], event.encode()));
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new LaunchException(
                            "timed out after "
                                    + options.rdzvTimeout().toSeconds()
                                    + " s waiting for "
                                    + n
                                    + " nodes at "
                                    + what
                                    + ": "
                                    + store.add(name + "/joined", 0)
                                    + " came (run '"
                                    + options.rdzvId()
                                    + "', agent store "
                                    + endpoint
                                    + "; --rdzv-timeout sets the limit)");
                }
                Thread.sleep(Math.max(1, options.monitorInterval().toMillis()));
            }
            byte[] verdict = store.get(go.get(0));
            return Arrays.equals(verdict, GO) ? Optional.empty() : Optional.of(verdict);
        } catch (StoreException e) {
            throw RestartRounds.lost(e);
        }
    }

    /**
     * Leaves the store; see {@link #leave(Store, int, int, boolean, Set)}.
     *
     * @param self this node's rank
     * @param gone nodes known to be dead, which will never leave
     */
    void leave(int self, Set<Integer> gone) {
        leave(store, self, options.nnodes(), serves(), gone);
    }

    /**
     * Leaves the store once the job's outcome is known: a node that does not serve the store says
     * so ({@code left/RANK}); the serving node waits (10 s at most) until every other live node has
     * left, so that none loses the store while it still reads the outcome. Never throws: a store
     * lost at this point changes nothing.
     *
     * @param store the launchers' store
     * @param self this node's rank
     * @param nnodes the number of nodes
     * @param serves whether this node serves the store
     * @param gone nodes known to be dead, which will never leave
     */
    static void leave(Store store, int self, int nnodes, boolean serves, Set<Integer> gone) {
        try {
            if (!serves) {
                store.set("left/" + self, "1");
                return;
            }
            List<String> others = new ArrayList<>();
            for (int node = 0; node < nnodes; ++node) {
                if (node != self && !gone.contains(node)) {
                    others.add("left/" + node);
                }
            }
            long deadline = System.nanoTime() + LEAVE_TIMEOUT.toNanos();
            while (!others.isEmpty() && !store.check(others) && System.nanoTime() - deadline < 0) {
                Thread.sleep(20);
            }
        } catch (StoreException e) {
            // the outcome is decided; a store that went away cannot change it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Closes the connection and, on the serving node, the server; idempotent. */
    @Override
    public void close() {
        client.close();
        if (server != null) {
            server.close();
        }
    }

    /**
     * Refuses a node whose {@code --nnodes} is not the first node's. While the nodes have not all
     * met, this fails the start for every node at once (the barriers count to {@code --nnodes}, and
     * nodes counting to different numbers would all wait out {@code --rdzv-timeout}): the verdict
     * closes the start barrier, by a compare-and-set of its go key. Once the nodes have met (the go
     * key is set), this launcher came late, a stray of another job say, and fails alone: the
     * running job is not told.
     */
    private void checkNodeCount() {
        byte[] mine = Integer.toString(options.nnodes()).getBytes(StandardCharsets.UTF_8);
        byte[] agreed = store.compareSet("nnodes", new byte[0], mine);
        if (Arrays.equals(agreed, mine)) {
            return;
        }
        String theirs = new String(agreed, StandardCharsets.UTF_8);
        String why =
                "--nnodes "
                        + options.nnodes()
                        + " on one node, "
                        + theirs
                        + " on another of run '"
                        + options.rdzvId()
                        + "' (expected: the same --nnodes on every node)";
        byte[] verdict = new RestartRounds.Event(RestartRounds.Kind.FAILURE, why).encode();
        if (Arrays.equals(store.compareSet(START_GO, new byte[0], verdict), GO)) {
            throw new LaunchException(
                    "--nnodes "
                            + options.nnodes()
                            + ": run '"
                            + options.rdzvId()
                            + "' at "
                            + endpoint
                            + " is already running with --nnodes "
                            + theirs
                            + ", whose nodes have all met; this launcher leaves it alone"
                            + " (expected: the same --nnodes on every node, and a new --rdzv-id or"
                            + " port for another job)");
        }
        if (serves()) {
            // The others poll the start's go key every --monitor-interval: the store stays up a
            // moment for them to read why, else they find it gone (and fail all the same).
            try {
                Thread.sleep(1000 + 3 * options.monitorInterval().toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        throw new LaunchException(why);
    }

    private int claimRank() {
        if (options.nodeRank() >= 0) {
            if (store.add("claim/" + options.nodeRank(), 1) != 1) {
                throw new LaunchException(
                        "--node-rank "
                                + options.nodeRank()
                                + ": another node of run '"
                                + options.rdzvId()
                                + "' has that rank already (expected: a different --node-rank on"
                                + " each node, or a new --rdzv-id)");
            }
            return options.nodeRank();
        }
        while (true) {
            long k = store.add("next_rank", 1) - 1;
            if (k >= options.nnodes()) {
                throw new LaunchException(
                        "more nodes than --nnodes "
                                + options.nnodes()
                                + " joined run '"
                                + options.rdzvId()
                                + "' at "
                                + endpoint
                                + " (expected: --nnodes launchers; or a new --rdzv-id per job)");
            }
            if (store.add("claim/" + k, 1) == 1) {
                return (int) k;
            }
        }
    }
}
