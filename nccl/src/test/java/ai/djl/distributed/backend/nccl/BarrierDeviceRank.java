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
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.store.HashStore;

import java.time.Duration;
import java.util.Map;

/**
 * Rank 1 of 2 running a first {@code barrier()} over a {@link ScriptedGpu} that shows one GPU, in a
 * process of its own so that {@link BarrierDeviceGuessTest} can give it an environment ({@code
 * LOCAL_RANK}). Prints {@link #DONE} and the backend, then exits 0; prints the failure and exits 1.
 */
public final class BarrierDeviceRank {

    /** The line's start once the barrier has run. */
    static final String DONE = "BARRIER DONE: ";

    private BarrierDeviceRank() {}

    /**
     * Runs the barrier.
     *
     * @param args none
     */
    public static void main(String[] args) {
        ScriptedGpu gpu = new ScriptedGpu();
        HashStore store = new HashStore();
        store.set("0", new byte[NcclUniqueId.BYTES]); // rank 0's unique id
        BackendContext context =
                new BackendContext(store, 1, 2, Device.Type.GPU, Duration.ofSeconds(10), Map.of());
        try (NcclBackend b =
                new NcclBackend(context, gpu.runtime(), DevicePointers::get, null, false)) {
            b.barrier().waitFor();
            System.out.println(DONE + b);
        } catch (RuntimeException e) {
            e.printStackTrace(System.out);
            System.exit(1);
        }
        System.exit(0);
    }
}
