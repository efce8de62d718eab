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

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.backend.nccl.CudaTensors.Tensor;
import ai.djl.distributed.store.HashStore;
import ai.djl.ndarray.types.DataType;

import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * World-size-1 all-reduce (AVG, in place: at one rank NCCL skips a SUM but runs AVG's kernel)
 * through the {@code nccl} backend itself, on tensors of the machine's libtorch, timed as {@code
 * bench/gpu/torch_allreduce.py} times PyTorch's {@code ProcessGroupNCCL}: each call enqueues and
 * waits as {@code dist.all_reduce} does (the caller's stream waits for the collective), a run of
 * calls back to back, one synchronize. The cost per call includes the tensor's view through the
 * shim, the events, the ordering and the watchdog's work. Run by {@code
 * bench/gpu/allreduce_bench.sh} from the GPU kit.
 */
public final class BackendAllReduceBench {

    private BackendAllReduceBench() {}

    /**
     * Runs the benchmark on GPU 0 and prints one line per type and size.
     *
     * @param args unused; {@code ITERS_SMALL} and {@code ITERS_LARGE} set the runs' lengths
     */
    public static void main(String[] args) {
        int itersSmall = Integer.parseInt(System.getenv().getOrDefault("ITERS_SMALL", "200"));
        int itersLarge = Integer.parseInt(System.getenv().getOrDefault("ITERS_LARGE", "20"));
        try (CudaTensors gpu = new CudaTensors();
                NcclBackend backend =
                        NcclBackendGpuTest.world(
                                new HashStore(), 0, 1, Duration.ofMinutes(5), Map.of())) {
            System.out.println(
                    "# djl-distributed nccl backend, NCCL "
                            + gpu.runtime.nccl().version()
                            + " from "
                            + gpu.runtime.nccl().path());
            NcclPlans plans = new NcclPlans(0, 1);
            for (DataType type : new DataType[] {DataType.FLOAT32, DataType.BFLOAT16}) {
                int width = NcclOps.dataType(type).width();
                for (long bytes = 4096; bytes <= (1L << 30); bytes *= 4) {
                    try (Tensor t = gpu.make(type, bytes / width)) {
                        // As the DJL path does per call: view the tensor through the shim.
                        Runnable call =
                                () -> {
                                    TensorView v =
                                            DevicePointers.check(
                                                    gpu.pointers.view(t.handle, () -> "bench"),
                                                    gpu.gpu());
                                    Work w =
                                            backend.runOn(
                                                    "allReduce",
                                                    gpu.gpu(),
                                                    List.of(v),
                                                    l -> plans.allReduce(l, ReduceOp.AVG),
                                                    List.of(t),
                                                    false);
                                    w.waitFor();
                                };
                        int iters = bytes <= (1 << 20) ? itersSmall : itersLarge;
                        for (int i = 0; i < 5; ++i) {
                            call.run();
                        }
                        gpu.check(gpu.cu.cuCtxSynchronize(), "cuCtxSynchronize");
                        long t0 = System.nanoTime();
                        for (int i = 0; i < iters; ++i) {
                            call.run();
                        }
                        gpu.check(gpu.cu.cuCtxSynchronize(), "cuCtxSynchronize");
                        double seconds = (System.nanoTime() - t0) / 1e9 / iters;
                        System.out.printf(
                                "allreduce impl=djl-nccl dtype=%s bytes=%d time_us=%.2f"
                                        + " algbw_GBps=%.3f%n",
                                type.name().toLowerCase(Locale.ROOT),
                                bytes,
                                seconds * 1e6,
                                bytes / seconds / 1e9);
                    }
                }
            }
        }
    }
}
