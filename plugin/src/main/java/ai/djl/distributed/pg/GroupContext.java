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
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.BackendProvider;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the groups of one world share: the store, laid out as PyTorch lays it out ({@code
 * default_pg/<group name>/...} for the group's own keys, {@code default_pg/<group
 * name>//<device>//...} for each backend, with {@code cuda} for GPUs), the backend providers by
 * device type and their options, the debug level, the counter that names sub-groups, and the list
 * of live groups. Closing the world group closes everything.
 */
final class GroupContext {

    private final Store userStore;
    private final boolean ownsStore;
    private final Store root;
    private final String backendName;
    private final Map<String, BackendProvider> providers; // device type -> provider, in order
    private final Map<String, Map<String, String>> options; // provider's own name -> options
    private final DebugLevel debug;
    private final int worldRank;
    private final int worldSize;
    private final List<ProcessGroup> groups = new ArrayList<>();
    private ProcessGroup world;
    private int nextGroup = 1;
    private boolean closed;

    GroupContext(
            Store userStore,
            boolean ownsStore,
            GroupSettings settings,
            int worldRank,
            int worldSize) {
        this.userStore = userStore;
        this.ownsStore = ownsStore;
        this.root = new PrefixStore("default_pg", userStore);
        this.backendName = settings.backend().toString();
        this.providers = settings.providers();
        this.options = settings.optionsByProvider();
        this.debug = settings.debug();
        this.worldRank = worldRank;
        this.worldSize = worldSize;
    }

    synchronized ProcessGroup createWorld(Duration timeout) {
        int[] ranks = new int[worldSize];
        Arrays.setAll(ranks, i -> i);
        world = create("0", worldRank, ranks, timeout);
        return world;
    }

    Optional<ProcessGroup> newGroup(int[] ranks, Duration timeout) {
        int[] sorted;
        if (ranks == null || ranks.length == 0) {
            // As new_group() and new_group([]): every rank of the world.
            sorted = new int[worldSize];
            Arrays.setAll(sorted, i -> i);
        } else {
            sorted = ranks.clone();
        }
        Arrays.sort(sorted);
        for (int i = 0; i < sorted.length; i++) {
            if (sorted[i] < 0 || sorted[i] >= worldSize || (i > 0 && sorted[i] == sorted[i - 1])) {
                throw new IllegalArgumentException(
                        "ranks: "
                                + Arrays.toString(sorted)
                                + " (expected: distinct world ranks in [0, "
                                + worldSize
                                + "))");
            }
        }
        String name;
        ProcessGroup parent;
        synchronized (this) {
            checkOpen(world);
            parent = world;
            // Every rank numbers every group, member or not, so names agree across the world.
            name = String.valueOf(nextGroup++);
        }
        int groupRank = Arrays.binarySearch(sorted, worldRank);
        // Every rank of the world offers the split to the world's backends, member or not:
        // ncclCommSplit is collective over the parent.
        Map<String, Backend> split = new LinkedHashMap<>();
        try {
            for (String device : providers.keySet()) {
                parent.backends()
                        .forType(device)
                        .split(
                                sorted,
                                groupRank < 0
                                        ? null
                                        : context(name, device, groupRank, sorted.length, timeout))
                        .ifPresent(b -> split.put(device, b));
            }
        } catch (RuntimeException | Error e) {
            new DeviceBackends(backendName, split).close();
            throw e;
        }
        if (groupRank < 0) {
            new DeviceBackends(backendName, split).close(); // none expected outside the group
            return Optional.empty();
        }
        return Optional.of(create(name, groupRank, sorted, timeout, split));
    }

    private ProcessGroup create(String name, int rank, int[] ranks, Duration timeout) {
        return create(name, rank, ranks, timeout, Map.of());
    }

    /** A backend's context: its keys sit where PyTorch's do (see the class comment). */
    private BackendContext context(
            String name, String device, int rank, int size, Duration timeout) {
        BackendProvider provider = providers.get(device);
        Store backendRoot = new PrefixStore(name + "/", root);
        return new BackendContext(
                new PrefixStore(torchDevice(device) + "/", backendRoot),
                rank,
                size,
                device,
                timeout,
                options.getOrDefault(provider.getNames().get(0), Map.of()));
    }

    private ProcessGroup create(
            String name, int rank, int[] ranks, Duration timeout, Map<String, Backend> split) {
        Store group = groupStore(name);
        Map<String, Backend> backends = new LinkedHashMap<>();
        CollectiveCheck check = null;
        try {
            for (Map.Entry<String, BackendProvider> e : providers.entrySet()) {
                String device = e.getKey();
                Backend made = split.get(device);
                backends.put(
                        device,
                        made != null
                                ? made
                                : e.getValue()
                                        .create(
                                                context(
                                                        name,
                                                        device,
                                                        rank,
                                                        ranks.length,
                                                        timeout)));
            }
            if (debug == DebugLevel.DETAIL) {
                check =
                        CollectiveCheck.create(
                                new PrefixStore("debug", group), rank, ranks.length, timeout);
            }
        } catch (RuntimeException | Error e) {
            // An Error too (no native thread to be had, say): the backends made so far hold
            // threads and sockets that nothing else would close.
            Map<String, Backend> all = new LinkedHashMap<>(split);
            all.putAll(backends);
            new DeviceBackends(backendName, all).close();
            throw e;
        }
        ProcessGroup g =
                new ProcessGroup(
                        this,
                        name,
                        rank,
                        ranks,
                        new DeviceBackends(backendName, backends),
                        check,
                        timeout);
        boolean added;
        synchronized (this) {
            // The world may have been destroyed while this group connected, outside the lock: its
            // close did not see this group, so the group is closed here rather than kept open.
            added = !closed;
            if (added) {
                groups.add(g);
            }
        }
        if (!added) {
            g.closeBackends();
            throw new IllegalStateException(
                    "the process group has been destroyed while group " + name + " was created");
        }
        return g;
    }

    synchronized void checkOpen(ProcessGroup group) {
        if (closed || (group != null && !groups.contains(group))) {
            throw new IllegalStateException("the process group has been destroyed");
        }
    }

    Store store() {
        return userStore;
    }

    /** The number of ranks in the world. */
    int worldSize() {
        return worldSize;
    }

    /** PyTorch's name of a DJL device type: {@code cuda} for {@code gpu}. */
    static String torchDevice(String deviceType) {
        return Device.Type.GPU.equals(deviceType) ? "cuda" : deviceType;
    }

    /**
     * Returns a group's own namespace, {@code default_pg/<name>} (its monitored barrier's keys);
     * its backends' lie beside it, under {@code default_pg/<name>//<device>/}.
     */
    Store groupStore(String name) {
        return new PrefixStore(name, root);
    }

    void close(ProcessGroup group) {
        List<ProcessGroup> toClose;
        synchronized (this) {
            if (group != world) {
                if (!groups.remove(group)) {
                    return;
                }
                toClose = List.of(group);
            } else {
                if (closed) {
                    return;
                }
                closed = true;
                toClose = new ArrayList<>(groups);
                groups.clear();
            }
        }
        // Outside the lock: a backend lets its queued operations finish first, for up to its
        // timeout, and meanwhile every other group must stay usable. Sub-groups close first, then
        // the world, then the store they all met in.
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).closeBackends();
        }
        if (group == world && ownsStore) {
            userStore.close();
        }
    }
}
