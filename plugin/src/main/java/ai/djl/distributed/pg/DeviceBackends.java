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
import ai.djl.ndarray.NDArray;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The backends of one process group, one per device type, and the choice among them: a collective
 * goes to the backend of its arrays' device type; one that mixes device types, or uses one the
 * group has no backend for, is refused naming them. Immutable once made; closing closes every
 * backend.
 */
final class DeviceBackends implements AutoCloseable {

    private final String name;
    private final Map<String, Backend> byDevice;

    /**
     * Creates the set.
     *
     * @param name the group's backend string, as the user wrote it
     * @param byDevice device type to backend, in order; owned (closed) from now on
     */
    DeviceBackends(String name, Map<String, Backend> byDevice) {
        this.name = name;
        this.byDevice = new LinkedHashMap<>(byDevice);
    }

    /** The backend string, e.g. {@code "cpu"} or {@code "cpu:cpu,gpu:nccl"}. */
    String name() {
        return name;
    }

    /** The device types the group has backends for. */
    Collection<String> deviceTypes() {
        return byDevice.keySet();
    }

    /**
     * The device type of operations without arrays (barriers) and of object collectives: CPU where
     * the group has it (no copies), else the first.
     */
    String defaultDeviceType() {
        return byDevice.containsKey(Device.Type.CPU)
                ? Device.Type.CPU
                : byDevice.keySet().iterator().next();
    }

    /**
     * Returns the backend of a device type.
     *
     * @param deviceType the type
     * @return the backend, or null if the group has none for it
     */
    Backend forType(String deviceType) {
        return byDevice.get(deviceType);
    }

    /** The backend for operations without arrays. */
    Backend forDefault() {
        return byDevice.get(defaultDeviceType());
    }

    /**
     * Returns the backend for a collective's arrays.
     *
     * @param arrays every array the collective reads or writes; none for the default backend
     * @return the backend of their device type
     * @throws IllegalArgumentException if they mix device types, or the group has no backend for
     *     theirs
     */
    Backend forArrays(List<NDArray> arrays) {
        return forArrays(arrays, "collective");
    }

    /**
     * Returns the backend for the arrays of one operation.
     *
     * @param arrays every array the operation reads or writes; none for the default backend
     * @param what the operation, for the message (e.g. {@code batchIsendIrecv})
     * @return the backend of their device type
     * @throws IllegalArgumentException if they mix device types, or the group has no backend for
     *     theirs
     */
    Backend forArrays(List<NDArray> arrays, String what) {
        if (!arrays.isEmpty()) {
            // The common case without allocating: one device type, which the group serves.
            String type = arrays.get(0).getDevice().getDeviceType();
            Backend backend = byDevice.get(type);
            boolean same = true;
            for (int i = 1; i < arrays.size() && same; i++) {
                same = type.equals(arrays.get(i).getDevice().getDeviceType());
            }
            if (backend != null && same) {
                return backend;
            }
        }
        List<Device> devices = new ArrayList<>(arrays.size());
        for (NDArray a : arrays) {
            devices.add(a.getDevice());
        }
        return byDevice.get(deviceTypeOf(devices, byDevice.keySet(), what));
    }

    /**
     * Returns the device type of a collective's arrays, checking they agree and the group serves
     * it.
     *
     * @param devices the arrays' devices
     * @param served the device types the group has backends for
     * @return the device type
     * @throws IllegalArgumentException naming the devices that differ, or the one not served
     */
    static String deviceTypeOf(List<Device> devices, Collection<String> served) {
        return deviceTypeOf(devices, served, "collective");
    }

    private static String deviceTypeOf(
            List<Device> devices, Collection<String> served, String what) {
        if (devices.isEmpty()) {
            return served.contains(Device.Type.CPU) ? Device.Type.CPU : served.iterator().next();
        }
        Device first = devices.get(0);
        for (Device d : devices) {
            if (!d.getDeviceType().equals(first.getDeviceType())) {
                throw new IllegalArgumentException(
                        "arrays: on "
                                + first
                                + " and "
                                + d
                                + " (expected: every array of one "
                                + what
                                + " on one device type)");
            }
        }
        String type = first.getDeviceType();
        if (!served.contains(type)) {
            throw new IllegalArgumentException(
                    "array: on "
                            + first
                            + " (expected: a device type this group has a backend for: "
                            + served
                            + "; for GPU arrays create the group with a gpu backend, e.g."
                            + " \"cpu:cpu,gpu:nccl\")");
        }
        return type;
    }

    /** Names every backend, e.g. {@code cpu -> cpu(transport=tcp)}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder();
        byDevice.forEach(
                (d, backend) ->
                        b.append(b.length() == 0 ? "" : ", ")
                                .append(d)
                                .append(" -> ")
                                .append(backend));
        return b.toString();
    }

    /** Closes every backend, the last made first; the first failure is rethrown after all. */
    @Override
    public void close() {
        List<Backend> all = new ArrayList<>(byDevice.values());
        RuntimeException failure = null;
        for (int i = all.size() - 1; i >= 0; i--) {
            try {
                all.get(i).close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
