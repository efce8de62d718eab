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

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Which backend serves which device type in a process group, as c10d's backend string: one name
 * ({@code "cpu"}: that backend for each device type it serves) or device-type pairs ({@code
 * "cpu:cpu,gpu:nccl"}). PyTorch's {@code cuda} is read as DJL's {@code gpu}, and {@code gloo} names
 * the CPU backend, so {@code "cpu:gloo,cuda:nccl"} works as written for PyTorch.
 *
 * <p>Immutable.
 */
final class BackendSpec {

    private static final List<String> DEVICE_TYPES = List.of(Device.Type.CPU, Device.Type.GPU);

    private final String text;
    private final String single; // the one name given alone, or null for pairs
    private final Map<String, String> byDevice; // device type -> backend name, as written

    private BackendSpec(String text, String single, Map<String, String> byDevice) {
        this.text = text;
        this.single = single;
        this.byDevice = byDevice;
    }

    /**
     * Parses a backend string.
     *
     * @param spec {@code "cpu"}, or {@code "DEVICE:NAME,..."} pairs
     * @return the parsed spec
     * @throws IllegalArgumentException naming what is malformed and what was expected
     */
    static BackendSpec parse(String spec) {
        if (spec == null || spec.isBlank()) {
            throw new IllegalArgumentException(
                    "backend: '" + spec + "' (expected: a name such as cpu, or cpu:cpu,gpu:nccl)");
        }
        String text = spec.trim().toLowerCase(Locale.ROOT);
        if (!text.contains(":")) {
            return new BackendSpec(text, text, Map.of());
        }
        Map<String, String> byDevice = new LinkedHashMap<>();
        for (String pair : text.split(",")) {
            String[] p = pair.trim().split(":", -1);
            if (p.length != 2 || p[0].isEmpty() || p[1].isEmpty()) {
                throw new IllegalArgumentException(
                        "backend: '"
                                + spec
                                + "' has '"
                                + pair.trim()
                                + "' (expected: DEVICE:NAME pairs, such as cpu:cpu,gpu:nccl)");
            }
            String device = p[0].equals("cuda") ? Device.Type.GPU : p[0];
            if (!DEVICE_TYPES.contains(device)) {
                throw new IllegalArgumentException(
                        "backend: '"
                                + spec
                                + "' names device type '"
                                + p[0]
                                + "' (expected: cpu, gpu or cuda)");
            }
            if (byDevice.put(device, p[1]) != null) {
                throw new IllegalArgumentException(
                        "backend: '"
                                + spec
                                + "' names device type "
                                + device
                                + " twice (expected: one backend per device type)");
            }
        }
        return new BackendSpec(text, null, Collections.unmodifiableMap(byDevice));
    }

    /** The one backend named alone, or null when the spec pairs device types with names. */
    String single() {
        return single;
    }

    /** Device type to backend name, in the order written; empty for a single name. */
    Map<String, String> byDevice() {
        return byDevice;
    }

    /** The spec as given (lower case), which the group reports as its backend's name. */
    @Override
    public String toString() {
        return text;
    }
}
