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

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * A world's settings, resolved and checked once: which provider serves each device type, each
 * provider's options, and the debug level.
 *
 * @param backend the backend string
 * @param providers device type to provider, in order
 * @param optionsByProvider each provider's options, by its own (first) name
 * @param debug the debug level
 */
record GroupSettings(
        BackendSpec backend,
        Map<String, BackendProvider> providers,
        Map<String, Map<String, String>> optionsByProvider,
        DebugLevel debug) {

    /**
     * Resolves a backend string and options against the available providers.
     *
     * @param spec the backend string
     * @param options options by backend name as the user gave it (aliases allowed)
     * @param debug the debug level
     * @return the settings
     * @throws IllegalArgumentException for an unknown backend, a device type its provider does not
     *     serve, or options for a backend the group does not have
     */
    static GroupSettings resolve(
            BackendSpec spec, Map<String, Map<String, String>> options, DebugLevel debug) {
        Map<String, BackendProvider> providers = new LinkedHashMap<>();
        if (spec.single() != null) {
            BackendProvider p = ProcessGroups.provider(spec.single());
            for (String device : p.getDeviceTypes()) {
                providers.put(device, p);
            }
        } else {
            spec.byDevice()
                    .forEach(
                            (device, name) -> {
                                BackendProvider p = ProcessGroups.provider(name);
                                if (!p.getDeviceTypes().contains(device)) {
                                    throw new IllegalArgumentException(
                                            "backend: '"
                                                    + spec
                                                    + "' gives "
                                                    + device
                                                    + " arrays to "
                                                    + name
                                                    + " (expected: a backend that takes them; "
                                                    + name
                                                    + " takes "
                                                    + p.getDeviceTypes()
                                                    + ")");
                                }
                                providers.put(device, p);
                            });
        }
        Map<String, Map<String, String>> byProvider = new TreeMap<>();
        options.forEach(
                (name, values) -> {
                    BackendProvider p = ProcessGroups.provider(name);
                    String own = p.getNames().get(0);
                    if (providers.values().stream()
                            .noneMatch(q -> q.getNames().get(0).equals(own))) {
                        throw new IllegalArgumentException(
                                "backend options for "
                                        + name
                                        + " (expected: options for a backend of this group: '"
                                        + spec
                                        + "')");
                    }
                    byProvider.computeIfAbsent(own, k -> new LinkedHashMap<>()).putAll(values);
                });
        return new GroupSettings(spec, providers, byProvider, debug);
    }
}
