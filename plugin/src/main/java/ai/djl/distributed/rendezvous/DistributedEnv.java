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

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The launcher's environment, read in one place: each variable from the environment, or from a
 * system property of the same name when the environment lacks it (handy in tests and IDEs).
 * Variables are those torchrun sets: RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR,
 * MASTER_PORT, TORCHELASTIC_USE_AGENT_STORE, TORCHELASTIC_RESTART_COUNT, ...
 *
 * <p>Immutable and thread-safe.
 */
public final class DistributedEnv {

    private final Map<String, String> values;

    private DistributedEnv(Map<String, String> values) {
        this.values = values;
    }

    /**
     * Returns the environment of this process (variables, then system properties).
     *
     * @return the process's environment
     */
    public static DistributedEnv fromProcess() {
        return new DistributedEnv(null);
    }

    /**
     * Returns an environment made of the given variables only.
     *
     * @param variables the variables
     * @return the environment
     * @throws IllegalArgumentException if the map, a name or a value is null
     */
    public static DistributedEnv of(Map<String, String> variables) {
        if (variables == null) {
            throw new IllegalArgumentException(
                    "variables: null (expected: a map of names to values)");
        }
        Map<String, String> copy = new HashMap<>(variables); // checked as it will be held
        for (Map.Entry<String, String> e : copy.entrySet()) {
            if (e.getKey() == null || e.getValue() == null) {
                throw new IllegalArgumentException(
                        "variables: "
                                + e.getKey()
                                + "="
                                + e.getValue()
                                + " (expected: a name and a value, neither null)");
            }
        }
        return new DistributedEnv(Map.copyOf(copy));
    }

    /**
     * Returns a variable.
     *
     * @param name the variable's name
     * @return its value, if set and not empty
     */
    public Optional<String> get(String name) {
        String v;
        if (values != null) {
            v = values.get(name);
        } else {
            v = System.getenv(name);
            if (v == null) {
                v = System.getProperty(name);
            }
        }
        return v == null || v.isEmpty() ? Optional.empty() : Optional.of(v);
    }

    /**
     * Returns an integer variable.
     *
     * @param name the variable's name
     * @return its value, if set
     * @throws IllegalArgumentException if it is set but not an integer
     */
    public Optional<Integer> getInt(String name) {
        Optional<String> v = get(name);
        if (v.isEmpty()) {
            return Optional.empty();
        }
        try {
            return Optional.of(Integer.parseInt(v.get().trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    name + ": '" + v.get() + "' (expected: an integer)", e);
        }
    }

    /**
     * Returns whether torchrun's agent hosts the store ({@code TORCHELASTIC_USE_AGENT_STORE} is
     * {@code True}), in which case every rank is a client of it.
     *
     * @return {@code true} under torchrun's agent store
     */
    public boolean useAgentStore() {
        return get("TORCHELASTIC_USE_AGENT_STORE").map("True"::equals).orElse(false);
    }
}
