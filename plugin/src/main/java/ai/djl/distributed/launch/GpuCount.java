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
package ai.djl.distributed.launch;

import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.ptr.IntByReference;

/**
 * The GPUs this process sees, counted as torchrun's {@code --nproc-per-node gpu} counts them, but
 * through the CUDA driver ({@code libcuda.so.1}, present wherever a GPU is usable) rather than a
 * CUDA runtime library, which a JVM may not find. {@code CUDA_VISIBLE_DEVICES} applies. No driver,
 * or a driver that fails to start, counts as no GPU.
 */
final class GpuCount {

    /** The two driver calls needed. */
    @SuppressWarnings("checkstyle:MethodName")
    interface Driver extends Library {
        int cuInit(int flags);

        int cuDeviceGetCount(IntByReference count);
    }

    private GpuCount() {}

    /**
     * Counts the visible GPUs.
     *
     * @return the count, 0 without a usable driver
     */
    static int visible() {
        try {
            Driver cu = Native.load("libcuda.so.1", Driver.class);
            IntByReference n = new IntByReference();
            if (cu.cuInit(0) != 0 || cu.cuDeviceGetCount(n) != 0) {
                return 0;
            }
            return n.getValue();
        } catch (LinkageError e) {
            // No driver, or one JNA cannot bind: the launcher counts no GPU rather than fail.
            return 0;
        }
    }
}
