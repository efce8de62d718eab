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

import ai.djl.Device;

import java.util.List;

/**
 * Creates backends of one kind; found through {@link java.util.ServiceLoader}, as DJL finds its
 * engines. Register an implementation in {@code
 * META-INF/services/ai.djl.distributed.backend.BackendProvider}. A process group holds one backend
 * per device type ({@code "cpu:cpu,gpu:nccl"}, as c10d's {@code "cpu:gloo,cuda:nccl"}), each made
 * by the provider named for that device type.
 */
public interface BackendProvider {

    /**
     * Returns the names this provider answers to, its own first (e.g. "cpu", "gloo").
     *
     * @return the names
     */
    List<String> getNames();

    /**
     * Returns the DJL device types whose arrays this provider's backends take, the one a group gets
     * when its backend is named alone first (e.g. {@code "cpu"} alone means {@code "cpu:cpu"}).
     *
     * @return the device types
     */
    default List<String> getDeviceTypes() {
        return List.of(Device.Type.CPU);
    }

    /**
     * Creates a backend for one group and device type; blocks until its peers have joined.
     *
     * @param context the group's store, rank, size, the device type, the timeout and the options
     * @return the backend
     * @throws IllegalArgumentException for an option the backend does not take, or a bad value
     */
    Backend create(BackendContext context);
}
