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
package ai.djl.distributed.pg;

import ai.djl.distributed.backend.BackendProvider;
import ai.djl.distributed.backend.Waits;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.distributed.rendezvous.Rendezvous;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.Stores;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;

/**
 * Creates world process groups, as {@code torch.distributed.init_process_group} does, without
 * global state: several worlds may live in one JVM (the in-process test harness runs one per
 * thread). {@link Distributed} keeps one world per process for code that wants the global style.
 */
public final class ProcessGroups {

    /** The default bound of every operation: 30 minutes, PyTorch's default for gloo. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(30);

    private ProcessGroups() {}

    /**
     * Returns a builder of a world group, for what the shorthands below do not offer: several
     * backends ({@code "cpu:cpu,gpu:nccl"}), backend options, the debug level.
     *
     * @return the builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Creates the world group after a rendezvous through an init method. Blocks until every rank
     * has joined and connected, or the timeout passes.
     *
     * @param backend the backend string: "cpu" (alias "gloo"), or pairs such as "cpu:cpu,gpu:nccl"
     * @param initMethod {@code env://}, {@code tcp://host:port} or {@code file:///path}
     * @param rank this rank, or -1 to read it from the URL or the environment
     * @param worldSize the number of ranks, or -1 to read it from the URL or the environment
     * @param timeout the bound of the rendezvous and of every later operation
     * @return the world group; closing it destroys every group and the store
     */
    public static ProcessGroup init(
            String backend, String initMethod, int rank, int worldSize, Duration timeout) {
        return builder()
                .setBackend(backend)
                .optInitMethod(initMethod)
                .optRank(rank)
                .optWorldSize(worldSize)
                .optTimeout(timeout)
                .build();
    }

    /**
     * Creates the world group on a store every rank shares. Blocks until every rank has connected,
     * or the timeout passes.
     *
     * @param backend the backend string: "cpu" (alias "gloo"), or pairs such as "cpu:cpu,gpu:nccl"
     * @param store the store; the caller keeps owning it and closes it after the group
     * @param rank this rank
     * @param worldSize the number of ranks
     * @param timeout the bound of every operation
     * @return the world group
     */
    public static ProcessGroup init(
            String backend, Store store, int rank, int worldSize, Duration timeout) {
        return builder()
                .setBackend(backend)
                .optStore(store)
                .optRank(rank)
                .optWorldSize(worldSize)
                .optTimeout(timeout)
                .build();
    }

    /**
     * Builds a world group, as {@code torch.distributed.init_process_group}'s arguments: the
     * backend string (required), then either an init method (default {@code env://}) or a store
     * with this rank and the world size, the timeout (default {@link #DEFAULT_TIMEOUT}), options
     * per backend, and the debug level (default: PyTorch's {@code TORCH_DISTRIBUTED_DEBUG}, else
     * OFF). Not thread-safe; {@link #build()} may be called once per world.
     */
    public static final class Builder {

        private String backend;
        private String initMethod;
        private Store store;
        private int rank = -1;
        private int worldSize = -1;
        private Duration timeout = DEFAULT_TIMEOUT;
        private final Map<String, Map<String, String>> options = new LinkedHashMap<>();
        private DebugLevel debug;

        private Builder() {}

        /**
         * Sets the backend string: one name ({@code "cpu"}, alias {@code "gloo"}), used for every
         * device type it serves, or device-type pairs ({@code "cpu:cpu,gpu:nccl"}; PyTorch's {@code
         * "cpu:gloo,cuda:nccl"} is read the same).
         *
         * @param backend the backend string
         * @return this builder
         */
        public Builder setBackend(String backend) {
            this.backend = backend;
            return this;
        }

        /**
         * Sets the init method, as {@code init_process_group}'s {@code init_method}; exclusive with
         * {@link #optStore}.
         *
         * @param initMethod {@code env://} (the default), {@code tcp://host:port} or {@code
         *     file:///path}
         * @return this builder
         */
        public Builder optInitMethod(String initMethod) {
            this.initMethod = initMethod;
            return this;
        }

        /**
         * Sets a store every rank shares, instead of an init method; the caller keeps owning it and
         * closes it after the group. {@link #optRank} and {@link #optWorldSize} are then required.
         *
         * @param store the store
         * @return this builder
         */
        public Builder optStore(Store store) {
            this.store = store;
            return this;
        }

        /**
         * Sets this rank.
         *
         * @param rank the rank, or -1 (the default) to read it from the init method's URL or the
         *     environment
         * @return this builder
         */
        public Builder optRank(int rank) {
            this.rank = rank;
            return this;
        }

        /**
         * Sets the world size.
         *
         * @param worldSize the number of ranks, or -1 (the default) to read it from the init
         *     method's URL or the environment
         * @return this builder
         */
        public Builder optWorldSize(int worldSize) {
            this.worldSize = worldSize;
            return this;
        }

        /**
         * Sets the bound of the rendezvous and of every later operation.
         *
         * @param timeout the timeout, {@link #DEFAULT_TIMEOUT} by default
         * @return this builder
         */
        public Builder optTimeout(Duration timeout) {
            this.timeout = timeout;
            return this;
        }

        /**
         * Sets an option of one backend of the group, e.g. {@code ("cpu", "transport", "shm")};
         * each backend refuses options it does not know, naming those it does.
         *
         * @param backend the backend's name (an alias works)
         * @param key the option
         * @param value its value
         * @return this builder
         */
        public Builder optBackendOption(String backend, String key, String value) {
            if (backend == null || key == null || value == null) {
                throw new IllegalArgumentException(
                        "backend option: "
                                + backend
                                + "."
                                + key
                                + "="
                                + value
                                + " (expected: a backend, a key and a value)");
            }
            options.computeIfAbsent(backend, b -> new LinkedHashMap<>()).put(key, value);
            return this;
        }

        /**
         * Sets the debug level; {@link DebugLevel#DETAIL} checks every collective across ranks
         * before it runs. That check is a collective itself, run when the call is made, so under
         * DETAIL an {@code ...Async} collective blocks until every rank of the group has issued it
         * (as PyTorch's DETAIL wrapper does): a rank must not wait on a point-to-point operation
         * that its peer issues only after that collective.
         *
         * @param debug the level; by default PyTorch's {@code TORCH_DISTRIBUTED_DEBUG}, else OFF
         * @return this builder
         */
        public Builder optDebugLevel(DebugLevel debug) {
            this.debug = debug;
            return this;
        }

        /**
         * Creates the world group: validates the settings, meets the other ranks (through the init
         * method or the store), and connects every backend. Blocks until every rank has joined, or
         * the timeout passes.
         *
         * @return the world group; closing it destroys every group (and the store, when it came
         *     from the init method)
         * @throws IllegalArgumentException naming a setting that is missing or wrong
         */
        public ProcessGroup build() {
            Stores.checkTimeout(timeout);
            // ChronoUnit.FOREVER and the like: every deadline derived from it must not overflow.
            Duration bounded = Waits.capped(timeout);
            if (store != null && initMethod != null) {
                throw new IllegalArgumentException(
                        "initMethod: '"
                                + initMethod
                                + "' and a store (expected: one of them, as init_process_group)");
            }
            // Resolved first: an unknown backend fails before waiting for the other ranks.
            GroupSettings settings =
                    GroupSettings.resolve(
                            BackendSpec.parse(backend),
                            options,
                            debug != null
                                    ? debug
                                    : DebugLevel.fromEnvironment(
                                            DistributedEnv.fromProcess().get(DebugLevel.VARIABLE)));
            if (store != null) {
                if (worldSize <= 0) {
                    throw new IllegalArgumentException(
                            "worldSize: " + worldSize + " (expected: > 0)");
                }
                if (rank < 0 || rank >= worldSize) {
                    throw new IllegalArgumentException(
                            "rank: " + rank + " (expected: in [0, " + worldSize + "))");
                }
                return new GroupContext(store, false, settings, rank, worldSize)
                        .createWorld(bounded);
            }
            Rendezvous.Result r =
                    Rendezvous.create(
                            initMethod == null ? Rendezvous.DEFAULT_INIT_METHOD : initMethod,
                            rank,
                            worldSize,
                            bounded);
            try {
                return new GroupContext(r.store(), true, settings, r.rank(), r.worldSize())
                        .createWorld(bounded);
            } catch (RuntimeException | Error e) {
                r.close();
                throw e;
            }
        }
    }

    /**
     * Returns the names of the backends available.
     *
     * @return each provider's names
     */
    public static List<String> availableBackends() {
        List<String> names = new ArrayList<>();
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class)) {
            names.addAll(p.getNames());
        }
        return names;
    }

    static BackendProvider provider(String name) {
        if (name == null) {
            throw new IllegalArgumentException(
                    "backend: null (expected: one of " + availableBackends() + ")");
        }
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class)) {
            if (p.getNames().contains(name.toLowerCase(java.util.Locale.ROOT))) {
                return p;
            }
        }
        throw new IllegalArgumentException(
                "backend: '" + name + "' (expected: one of " + availableBackends() + ")");
    }
}
