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
package ai.djl.distributed.backend;

import ai.djl.distributed.store.Store;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * What a {@link BackendProvider} is given to create one backend of one group: the group's store
 * (namespaced for the group and the device), this rank and the group's size, the device type the
 * backend serves, the bound of every blocking step, and the options the user gave this backend.
 *
 * <p>Immutable.
 *
 * @param store the group's store, namespaced for this group and device type
 * @param rank this process's rank in the group
 * @param size the group's size
 * @param deviceType the DJL device type the backend serves ({@code "cpu"}, {@code "gpu"})
 * @param timeout the bound of every blocking step, setup included (at most {@link Waits#LONGEST})
 * @param options the options the user gave this backend by name (e.g. {@code transport=shm})
 */
public record BackendContext(
        Store store,
        int rank,
        int size,
        String deviceType,
        Duration timeout,
        Map<String, String> options) {

    /**
     * Checks and copies the context's parts.
     *
     * @param store the group's store, namespaced for this group and device type
     * @param rank this process's rank in the group
     * @param size the group's size
     * @param deviceType the DJL device type the backend serves
     * @param timeout the bound of every blocking step, setup included
     * @param options the options the user gave this backend by name
     * @throws IllegalArgumentException naming a part that is missing or out of range
     */
    public BackendContext {
        if (store == null) {
            throw new IllegalArgumentException("store: null (expected: the group's store)");
        }
        if (size < 1 || rank < 0 || rank >= size) {
            throw new IllegalArgumentException(
                    "rank: " + rank + " of size " + size + " (expected: 0 <= rank < size)");
        }
        if (deviceType == null || deviceType.isEmpty()) {
            throw new IllegalArgumentException(
                    "deviceType: '" + deviceType + "' (expected: a DJL device type, e.g. cpu)");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
        }
        timeout = Waits.capped(timeout);
        options = Map.copyOf(options == null ? Map.of() : options);
    }

    /**
     * Returns an option, checking first that the backend knows every option it was given.
     *
     * @param backend the backend's name, for the message
     * @param known every option the backend takes
     * @param key the option wanted
     * @return its value, or null if not given
     * @throws IllegalArgumentException naming an option the backend does not take
     */
    public String option(String backend, Set<String> known, String key) {
        for (String given : options.keySet()) {
            if (!known.contains(given)) {
                throw new IllegalArgumentException(
                        "backend option "
                                + backend
                                + "."
                                + given
                                + " (expected one of "
                                + new TreeSet<>(known)
                                + ")");
            }
        }
        return options.get(key);
    }
}
