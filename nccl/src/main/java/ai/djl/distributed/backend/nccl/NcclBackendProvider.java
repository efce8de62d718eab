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
package ai.djl.distributed.backend.nccl;

import ai.djl.Device;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.BackendProvider;

import java.util.List;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Registers the {@code nccl} backend for GPU arrays ({@code "cpu:cpu,gpu:nccl"}, or PyTorch's
 * {@code "cpu:gloo,cuda:nccl"}). Creating it probes the machine first ({@link NcclRuntime}): with
 * no CUDA driver, no GPU or no usable NCCL it fails at once with a {@link NcclUnavailableException}
 * saying what it looked for, where, and what it found.
 *
 * <p>Where the probe succeeds it makes an {@link NcclBackend}, with the options {@value #DEVICE}
 * and {@value #BLOCKING_WAIT}. Thread-safe.
 */
public final class NcclBackendProvider implements BackendProvider {

    /** The option naming the GPU to create the communicator on at once (as {@code device_id}). */
    public static final String DEVICE = "device";

    /** The option making {@code Work.waitFor} block the host ({@code TORCH_NCCL_BLOCKING_WAIT}). */
    public static final String BLOCKING_WAIT = "blockingWait";

    /** The options this backend takes. */
    public static final Set<String> OPTIONS = Set.of(DEVICE, BLOCKING_WAIT);

    private final Supplier<NcclRuntime> probe;

    /** Creates the provider that probes this process ({@link java.util.ServiceLoader}'s). */
    public NcclBackendProvider() {
        this(NcclRuntime::probe);
    }

    /**
     * Creates a provider that probes through the given means.
     *
     * @param probe finds the driver and NCCL, or throws {@link NcclUnavailableException}
     */
    NcclBackendProvider(Supplier<NcclRuntime> probe) {
        this.probe = probe;
    }

    /** {@inheritDoc} */
    @Override
    public List<String> getNames() {
        return List.of(NcclOps.BACKEND);
    }

    /** {@inheritDoc} */
    @Override
    public List<String> getDeviceTypes() {
        return List.of(Device.Type.GPU);
    }

    /**
     * {@inheritDoc}
     *
     * @throws NcclUnavailableException when the driver, a GPU or a usable NCCL is missing
     * @throws IllegalArgumentException naming an option or value it does not take
     */
    @Override
    public Backend create(BackendContext context) {
        String device = context.option(NcclOps.BACKEND, OPTIONS, DEVICE);
        String blocking = context.option(NcclOps.BACKEND, OPTIONS, BLOCKING_WAIT);
        Integer eager = device == null ? null : parseDevice(device);
        boolean blockingWait = parseBoolean(blocking);
        NcclRuntime runtime = probe.get();
        return new NcclBackend(context, runtime, DevicePointers::get, eager, blockingWait);
    }

    private static Integer parseDevice(String value) {
        try {
            int id = Integer.parseInt(value.trim());
            if (id >= 0) {
                return id;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(
                "backend option "
                        + NcclOps.BACKEND
                        + "."
                        + DEVICE
                        + "="
                        + value
                        + " (expected: a GPU id >= 0)");
    }

    private static boolean parseBoolean(String value) {
        if (value == null || value.equalsIgnoreCase("false")) {
            return false;
        }
        if (value.equalsIgnoreCase("true")) {
            return true;
        }
        throw new IllegalArgumentException(
                "backend option "
                        + NcclOps.BACKEND
                        + "."
                        + BLOCKING_WAIT
                        + "="
                        + value
                        + " (expected: true or false)");
    }
}
