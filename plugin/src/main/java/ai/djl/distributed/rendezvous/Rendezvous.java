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
package ai.djl.distributed.rendezvous;

import ai.djl.distributed.store.FileStore;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.Stores;
import ai.djl.distributed.store.tcp.TcpStore;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * Turns an init method into a store, a rank and a world size, as {@code
 * torch.distributed.rendezvous} does, with PyTorch's error messages:
 *
 * <ul>
 *   <li>{@code env://}: rank and world size from the URL query, else RANK and WORLD_SIZE; the store
 *       is a TcpStore at MASTER_ADDR:MASTER_PORT, served by rank 0;
 *   <li>{@code tcp://host:port?rank=R&world_size=N}: the same store at host:port;
 *   <li>{@code file:///path?rank=R&world_size=N}: a {@link FileStore} on that file, removed when
 *       the last of N ranks closes it.
 * </ul>
 *
 * <p>A rank and world size passed explicitly are added to the URL's query; a URL that already has
 * them is rejected, as in PyTorch. Under torchrun's agent store ({@code
 * TORCHELASTIC_USE_AGENT_STORE=True}) every rank is a client of the agent's store, seen through
 * {@code PrefixStore("/worker/attempt_" + TORCHELASTIC_RESTART_COUNT, store)} ({@link
 * #attemptPrefix}), as PyTorch 1.13 to 2.3 scope it: the store outlives the workers of a failed
 * attempt, and the next attempt must not read their keys (the addresses of processes that are
 * gone). PyTorch 2.4 dropped the prefix; a Python rank of 2.4 or later meets a Java rank through
 * the same prefix only if it adds it itself. The TcpStore of rank 0 is multi-tenant, so several
 * groups of one process may rendezvous on one port.
 *
 * <p>Creating a TcpStore blocks until every rank has joined (the TcpStore worker count) or the
 * timeout expires. Creating a FileStore does not wait for the other ranks: it waits, within the
 * timeout, only for the file's lock to add itself to {@code refcount/}; ranks meet later, when they
 * wait for each other's keys.
 */
public final class Rendezvous {

    /** PyTorch's default init method. */
    public static final String DEFAULT_INIT_METHOD = "env://";

    /** The prefix of the attempt-scoped keys under torchrun's agent store, before the attempt. */
    public static final String ATTEMPT_PREFIX = "/worker/attempt_";

    // PyTorch's prefixes of its tcp:// and file:// handlers' errors
    private static final String TCP_ERROR =
            "Error initializing torch.distributed using tcp:// rendezvous: ";
    private static final String FILE_ERROR =
            "Error initializing torch.distributed using file:// rendezvous: ";

    private Rendezvous() {}

    /**
     * What a rendezvous yields. Closing it closes the store (under the agent store, the client
     * below the attempt prefix too).
     *
     * @param store the store every rank shares
     * @param rank this process's rank
     * @param worldSize the number of ranks
     */
    public record Result(Store store, int rank, int worldSize) implements AutoCloseable {

        /** Closes the store. */
        @Override
        public void close() {
            store.close();
        }
    }

    /**
     * Rendezvous through an init method, reading the process's environment.
     *
     * @param initMethod {@code env://}, {@code tcp://host:port} or {@code file:///path}
     * @param rank this rank, or -1 to take it from the URL or the environment
     * @param worldSize the world size, or -1 to take it from the URL or the environment
     * @param timeout the store's timeout, joining included
     * @return the store, rank and world size
     * @throws IllegalArgumentException if the init method or environment is incomplete or wrong
     */
    public static Result create(String initMethod, int rank, int worldSize, Duration timeout) {
        return create(initMethod, rank, worldSize, timeout, DistributedEnv.fromProcess());
    }

    /**
     * Rendezvous through an init method, reading the given environment.
     *
     * @param initMethod {@code env://}, {@code tcp://host:port} or {@code file:///path}
     * @param rank this rank, or -1 to take it from the URL or the environment
     * @param worldSize the world size, or -1 to take it from the URL or the environment
     * @param timeout the store's timeout, joining included
     * @param env where to read RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT and torchrun's flags
     * @return the store, rank and world size
     * @throws IllegalArgumentException if the init method or environment is incomplete or wrong
     */
    public static Result create(
            String initMethod, int rank, int worldSize, Duration timeout, DistributedEnv env) {
        Stores.checkTimeout(timeout);
        if (initMethod == null || initMethod.isEmpty()) {
            throw new IllegalArgumentException(
                    "initMethod: '" + initMethod + "' (expected: env://, tcp://... or file://...)");
        }
        Url uri = Url.parse(initMethod);
        Map<String, String> query = uri.query();
        if ((rank != -1 || worldSize != -1)
                && (query.containsKey("rank") || query.containsKey("world_size"))) {
            throw new IllegalArgumentException(
                    "The url: "
                            + initMethod
                            + " has node-specific arguments(rank, world_size) already.");
        }
        if (rank != -1) {
            query.put("rank", Integer.toString(rank));
        }
        if (worldSize != -1) {
            query.put("world_size", Integer.toString(worldSize));
        }
        String scheme = uri.scheme();
        switch (scheme) {
            case "env":
                return env(query, timeout, env);
            case "tcp":
                return tcp(uri, query, timeout, env);
            case "file":
                return file(uri, query, timeout);
            default:
                throw new IllegalArgumentException("No rendezvous handler for " + scheme + "://");
        }
    }

    private static Result env(Map<String, String> query, Duration timeout, DistributedEnv env) {
        int rank = intParam(query, "rank").orElseGet(() -> required(env, "RANK"));
        int worldSize = intParam(query, "world_size").orElseGet(() -> required(env, "WORLD_SIZE"));
        String host =
                env.get("MASTER_ADDR")
                        .orElseThrow(() -> new IllegalArgumentException(missing("MASTER_ADDR")));
        int port = required(env, "MASTER_PORT");
        return new Result(tcpStore(host, port, rank, worldSize, timeout, env), rank, worldSize);
    }

    private static Result tcp(
            Url uri, Map<String, String> query, Duration timeout, DistributedEnv env) {
        int colon = uri.netloc().lastIndexOf(':');
        String digits = colon < 0 ? "" : uri.netloc().substring(colon + 1);
        if (colon < uri.netloc().lastIndexOf(']') || digits.isEmpty()) {
            throw new IllegalArgumentException(TCP_ERROR + "port number missing");
        }
        String host = uri.netloc().substring(0, colon).replace("[", "").replace("]", "");
        int port;
        try {
            port = Integer.parseInt(digits);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    "port: '" + digits + "' in " + uri.netloc() + " (expected: a number)", e);
        }
        if (port == 0) {
            // as PyTorch's "if not result.port": rank 0 would serve where no other rank can find it
            throw new IllegalArgumentException(TCP_ERROR + "port number missing");
        }
        int rank = requiredParam(query, "rank", TCP_ERROR + "rank parameter missing");
        int worldSize =
                requiredParam(query, "world_size", TCP_ERROR + "world size parameter missing");
        return new Result(tcpStore(host, port, rank, worldSize, timeout, env), rank, worldSize);
    }

    private static Result file(Url uri, Map<String, String> query, Duration timeout) {
        String path = uri.path();
        if (path == null || path.isEmpty()) {
            throw new IllegalArgumentException(FILE_ERROR + "path missing");
        }
        int rank = requiredParam(query, "rank", FILE_ERROR + "rank parameter missing");
        int worldSize =
                requiredParam(query, "world_size", FILE_ERROR + "world size parameter missing");
        checkRank(rank, worldSize);
        // The timeout bounds the opening too: it waits for the file's lock to add to refcount/.
        return new Result(new FileStore(Path.of(path), worldSize, timeout), rank, worldSize);
    }

    // PyTorch's _create_c10d_store: rank 0 serves unless torchrun's agent already does.
    private static Store tcpStore(
            String host, int port, int rank, int worldSize, Duration timeout, DistributedEnv env) {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException(
                    "port must have value from 0 to 65535 but was " + port + ".");
        }
        checkRank(rank, worldSize);
        boolean agent = env.useAgentStore();
        // Read before connecting: a missing restart count fails without touching the network.
        String prefix = agent ? attemptPrefix(env) : null;
        TcpStore store =
                TcpStore.builder()
                        .setHost(host)
                        .setPort(port)
                        .optServer(!agent && rank == 0)
                        .optMultiTenant(true)
                        .optWorldSize(worldSize)
                        .optTimeout(timeout)
                        .build();
        return agent ? PrefixStore.owning(prefix, store) : store;
    }

    /**
     * Returns the prefix under which the ranks of one attempt of a torchrun (or djlrun) job meet on
     * the agent's store: {@code "/worker/attempt_" + TORCHELASTIC_RESTART_COUNT}, PyTorch's bytes,
     * so that a Java rank's keys equal a Python rank's ({@code default_pg/...} becomes {@code
     * /worker/attempt_0/default_pg/...}, sent on the wire with TCPStore's leading slash).
     *
     * @param env the environment
     * @return the prefix
     * @throws IllegalArgumentException if TORCHELASTIC_RESTART_COUNT is not set or not an integer
     *     of at least 0
     */
    public static String attemptPrefix(DistributedEnv env) {
        int attempt =
                env.getInt("TORCHELASTIC_RESTART_COUNT")
                        .orElseThrow(
                                () ->
                                        new IllegalArgumentException(
                                                "TORCHELASTIC_RESTART_COUNT: not set (expected: the"
                                                        + " attempt number, 0 or more, whenever"
                                                        + " TORCHELASTIC_USE_AGENT_STORE=True)"));
        if (attempt < 0) {
            throw new IllegalArgumentException(
                    "TORCHELASTIC_RESTART_COUNT: " + attempt + " (expected: 0 or more)");
        }
        return ATTEMPT_PREFIX + attempt;
    }

    private static void checkRank(int rank, int worldSize) {
        if (worldSize < 1) {
            throw new IllegalArgumentException(
                    "world_size: " + worldSize + " (expected: at least 1)");
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException(
                    "rank: " + rank + " (expected: 0 to world_size - 1 = " + (worldSize - 1) + ")");
        }
    }

    private static int required(DistributedEnv env, String name) {
        return env.getInt(name).orElseThrow(() -> new IllegalArgumentException(missing(name)));
    }

    private static String missing(String name) {
        return "Error initializing torch.distributed using env:// rendezvous: environment variable "
                + name
                + " expected, but not set";
    }

    private static int requiredParam(Map<String, String> query, String name, String missing) {
        return intParam(query, name).orElseThrow(() -> new IllegalArgumentException(missing));
    }

    private static Optional<Integer> intParam(Map<String, String> query, String name) {
        String v = query.get(name);
        if (v == null) {
            return Optional.empty();
        }
        try {
            return Optional.of(Integer.parseInt(v));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    name + ": '" + v + "' in the URL query (expected: an integer)", e);
        }
    }

    /** A URL split as Python's urlparse splits it ({@code java.net.URI} rejects {@code env://}). */
    private record Url(String scheme, String netloc, String path, Map<String, String> query) {

        static Url parse(String url) {
            int sep = url.indexOf("://");
            if (sep < 0) {
                throw new IllegalArgumentException(
                        "initMethod: '" + url + "' (expected: env://, tcp://... or file://...)");
            }
            String rest = url.substring(sep + 3);
            int hash = rest.indexOf('#'); // the fragment goes first, as urlparse splits it
            if (hash >= 0) {
                rest = rest.substring(0, hash);
            }
            String rawQuery = "";
            int q = rest.indexOf('?');
            if (q >= 0) {
                rawQuery = rest.substring(q + 1);
                rest = rest.substring(0, q);
            }
            int slash = rest.indexOf('/');
            String netloc = slash < 0 ? rest : rest.substring(0, slash);
            String path = slash < 0 ? "" : rest.substring(slash);
            // urlparse lowers the scheme: FILE:// is file://
            String scheme = url.substring(0, sep).toLowerCase(Locale.ROOT);
            return new Url(scheme, netloc, path, parseQuery(rawQuery));
        }

        private static Map<String, String> parseQuery(String raw) {
            Map<String, String> out = new LinkedHashMap<>();
            for (String pair : raw.split("&")) {
                if (pair.isEmpty()) {
                    continue;
                }
                int eq = pair.indexOf('=');
                String k = eq < 0 ? pair : pair.substring(0, eq);
                String v = eq < 0 ? "" : pair.substring(eq + 1);
                out.put(
                        URLDecoder.decode(k, StandardCharsets.UTF_8),
                        URLDecoder.decode(v, StandardCharsets.UTF_8));
            }
            return out;
        }
    }
}
