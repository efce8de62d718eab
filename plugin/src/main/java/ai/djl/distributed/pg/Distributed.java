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

import ai.djl.Device;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.engine.Engine;

import java.time.Duration;

/**
 * The global, one-world-per-process style of {@code torch.distributed}: {@link #initProcessGroup},
 * {@link #getRank()}, {@link #getWorldSize()}, {@link #destroyProcessGroup()}. The collectives
 * themselves are on the {@link ProcessGroup} that {@link #getWorldGroup()} returns. Code that needs
 * several worlds in one JVM uses {@link ProcessGroups} instead.
 *
 * <p>Thread-safe. No method waits for an {@link #initProcessGroup} in progress on another thread:
 * {@link #isInitialized()}, {@link #getWorldGroup()}, {@link #getRank()} and {@link
 * #getWorldSize()} answer at once, and {@link #destroyProcessGroup()} (from a shutdown hook, say)
 * marks such an initialisation cancelled and returns.
 */
public final class Distributed {

    private static final Object LOCK = new Object();
    // Read without the lock; written under it.
    private static volatile ProcessGroup world;
    // The thread building the world, outside the lock, or null: one initialisation at a time.
    private static Thread initialising; // guarded by LOCK
    // Whether destroyProcessGroup ran while the world was being built.
    private static boolean destroyedWhileInitialising; // guarded by LOCK

    private Distributed() {}

    /**
     * Initialises the world from the launcher's environment ({@code env://}: MASTER_ADDR,
     * MASTER_PORT, RANK, WORLD_SIZE), with the default timeout.
     *
     * @param backend "cpu" (alias "gloo")
     * @return the world group
     */
    public static ProcessGroup initProcessGroup(String backend) {
        return initProcessGroup(backend, "env://", -1, -1, ProcessGroups.DEFAULT_TIMEOUT);
    }

    /**
     * Initialises the world through an init method. Blocks until every rank has joined.
     *
     * @param backend "cpu" (alias "gloo")
     * @param initMethod {@code env://}, {@code tcp://host:port} or {@code file:///path}
     * @param rank this rank, or -1 to read it from the URL or the environment
     * @param worldSize the number of ranks, or -1 to read it from the URL or the environment
     * @param timeout the bound of the rendezvous and of every operation
     * @return the world group
     * @throws IllegalStateException if the world is already initialised or being initialised, or
     *     {@link #destroyProcessGroup()} ran meanwhile
     */
    public static ProcessGroup initProcessGroup(
            String backend, String initMethod, int rank, int worldSize, Duration timeout) {
        return initProcessGroup(
                ProcessGroups.builder()
                        .setBackend(backend)
                        .optInitMethod(initMethod)
                        .optRank(rank)
                        .optWorldSize(worldSize)
                        .optTimeout(timeout));
    }

    /**
     * Initialises the world from a builder (several backends, backend options, the debug level).
     * Blocks until every rank has joined, holding no lock: the other methods answer meanwhile. A
     * {@link #destroyProcessGroup()} meanwhile marks it cancelled: the rendezvous still runs to its
     * end (or its timeout), then the group it built is closed and this throws, so that no world
     * outlives a destroy.
     *
     * @param builder the world's settings
     * @return the world group
     * @throws IllegalStateException if the world is already initialised, another thread is
     *     initialising it, or {@link #destroyProcessGroup()} ran while it was being built
     */
    public static ProcessGroup initProcessGroup(ProcessGroups.Builder builder) {
        synchronized (LOCK) {
            if (world != null) {
                throw new IllegalStateException(
                        "the default process group is already initialised (destroyProcessGroup"
                                + " first)");
            }
            if (initialising != null) {
                throw new IllegalStateException(
                        "the default process group is being initialised by thread '"
                                + initialising.getName()
                                + "' (expected: one initProcessGroup at a time)");
            }
            initialising = Thread.currentThread();
            destroyedWhileInitialising = false;
        }
        ProcessGroup built;
        try {
            built = builder.build();
        } catch (RuntimeException | Error e) {
            endInit(null);
            throw e;
        }
        if (!endInit(built)) {
            built.close();
            throw new IllegalStateException(
                    "destroyProcessGroup ran while initProcessGroup was building the default"
                            + " process group: the group is closed (expected: destroy after"
                            + " initProcessGroup returns)");
        }
        return built;
    }

    // Ends the initialisation in progress: the group built becomes the world unless a destroy came
    // meanwhile. Returns whether it did.
    private static boolean endInit(ProcessGroup built) {
        synchronized (LOCK) {
            boolean keep = built != null && !destroyedWhileInitialising;
            if (keep) {
                world = built;
            }
            initialising = null;
            destroyedWhileInitialising = false;
            return keep;
        }
    }

    /**
     * Returns whether the world is initialised.
     *
     * @return whether {@link #initProcessGroup} has run and the world is not destroyed
     */
    public static boolean isInitialized() {
        return world != null;
    }

    /**
     * Returns the world group.
     *
     * @return the world group
     * @throws IllegalStateException if it is not initialised
     */
    public static ProcessGroup getWorldGroup() {
        ProcessGroup w = world;
        if (w == null) {
            throw new IllegalStateException(
                    "the default process group has not been initialised (call initProcessGroup)");
        }
        return w;
    }

    /**
     * Returns this process's world rank.
     *
     * @return the rank
     */
    public static int getRank() {
        return getWorldGroup().getRank();
    }

    /**
     * Returns the world size.
     *
     * @return the number of ranks
     */
    public static int getWorldSize() {
        return getWorldGroup().getSize();
    }

    /**
     * Returns the device this worker trains on, as torchrun users pick {@code torch.device("cuda",
     * LOCAL_RANK)}: GPU {@code LOCAL_RANK} (0 when unset) where DJL's engine sees GPUs, GPU 0 where
     * it sees exactly one (each worker given its own by {@code CUDA_VISIBLE_DEVICES}), else the
     * CPU. With {@code bin/djlrun --nproc-per-node gpu}, every worker of a node gets its own GPU.
     * Needs no process group.
     *
     * @return the device
     * @throws IllegalStateException if {@code LOCAL_RANK} names a GPU this process cannot see
     */
    public static Device localDevice() {
        return localDevice(DistributedEnv.fromProcess(), Engine.getInstance().getGpuCount());
    }

    /**
     * The device for a worker with the given environment on a host with the given GPUs.
     *
     * @param env the worker's environment
     * @param gpus the GPUs it sees
     * @return the device
     */
    static Device localDevice(DistributedEnv env, int gpus) {
        if (gpus <= 0) {
            return Device.cpu();
        }
        int local = env.getInt("LOCAL_RANK").orElse(0);
        if (gpus == 1) {
            return Device.gpu(0);
        }
        if (local < 0 || local >= gpus) {
            throw new IllegalStateException(
                    "LOCAL_RANK="
                            + local
                            + " (expected: 0 <= LOCAL_RANK < "
                            + gpus
                            + ", the GPUs this process sees; start one worker per GPU, e.g."
                            + " djlrun --nproc-per-node gpu)");
        }
        return Device.gpu(local);
    }

    /**
     * Returns the world group's backend name.
     *
     * @return the name
     */
    public static String getBackend() {
        return getWorldGroup().getBackendName();
    }

    /**
     * Runs a monitored barrier on the world with its timeout, naming the first missing rank; see
     * {@link ProcessGroup#monitoredBarrier(Duration, boolean)}.
     *
     * @throws IllegalStateException if the world is not initialised
     */
    public static void monitoredBarrier() {
        getWorldGroup().monitoredBarrier();
    }

    /**
     * Runs a monitored barrier on the world, as {@code torch.distributed.monitored_barrier(timeout,
     * wait_all_ranks)}; see {@link ProcessGroup#monitoredBarrier(Duration, boolean)}.
     *
     * @param timeout how long rank 0 waits for the others; positive
     * @param waitAllRanks whether rank 0 names every rank missing, rather than only the first
     * @throws IllegalStateException if the world is not initialised
     */
    public static void monitoredBarrier(Duration timeout, boolean waitAllRanks) {
        getWorldGroup().monitoredBarrier(timeout, waitAllRanks);
    }

    /**
     * Destroys the world and every group created from it; does nothing if none is initialised.
     * Blocks while the world closes, but never for an {@link #initProcessGroup} in progress on
     * another thread: that one is marked cancelled (once its rendezvous ends, it closes the group
     * it built and throws), so a shutdown hook can call this while the main thread waits in the
     * rendezvous.
     */
    public static void destroyProcessGroup() {
        ProcessGroup closing;
        synchronized (LOCK) {
            closing = world;
            world = null;
            if (initialising != null) {
                destroyedWhileInitialising = true;
            }
        }
        // outside the lock: closing may take a while, and the readers must not wait for it
        if (closing != null) {
            closing.close();
        }
    }
}
