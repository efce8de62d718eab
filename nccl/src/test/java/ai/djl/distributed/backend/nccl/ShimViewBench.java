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

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

/**
 * The host cost of viewing an array through libtorch's shim, which every NCCL collective pays per
 * array: {@link DevicePointers#view} against one bare shim call, on a CPU array of DJL's libtorch
 * (the calls are the same for a GPU array). Five rounds of 200,000 views; prints microseconds per
 * call. The command is in {@code docs/PERFORMANCE.md}.
 */
public final class ShimViewBench {

    private ShimViewBench() {}

    /**
     * Runs the rounds.
     *
     * @param args unused
     */
    public static void main(String[] args) {
        try (NDManager m = NDManager.newBaseManager()) {
            NDArray x = m.ones(new Shape(1024));
            DevicePointers pointers = DevicePointers.get();
            Pointer handle = new Pointer((Long) ((ai.djl.util.NativeResource<?>) x).getHandle());
            Memory slot = new Memory(8);
            int n = 200_000;
            for (int round = 0; round < 5; round++) {
                long sink = 0;
                long t0 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    sink += pointers.view(x).address();
                }
                long t1 = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    sink += pointers.shim().aoti_torch_get_data_ptr(handle, slot);
                }
                long t2 = System.nanoTime();
                System.out.printf(
                        "view_us=%.2f one_shim_call_us=%.3f (%d)%n",
                        (t1 - t0) / 1e3 / n, (t2 - t1) / 1e3 / n, sink & 1);
            }
        }
    }
}
