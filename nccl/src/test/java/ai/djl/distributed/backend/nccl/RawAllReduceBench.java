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

import com.sun.jna.Pointer;
import com.sun.jna.ptr.LongByReference;

/**
 * NCCL's in-place all-reduce (AVG, which runs a kernel at one rank where SUM is skipped) at world
 * size 1 through this module's JNA bindings on raw device buffers, float32 and bfloat16, 4 KiB to 1
 * GiB, timed as {@code bench/gpu/torch_allreduce.py} times PyTorch's {@code ProcessGroupNCCL}:
 * warm-up, then a run of calls back to back on one stream and one synchronize. It measures the
 * bindings' cost per call (JNA's), the floor under the backend that is still to come; run by {@code
 * bench/gpu/allreduce_bench.sh} from the GPU kit.
 */
public final class RawAllReduceBench {

    private RawAllReduceBench() {}

    /**
     * Runs the benchmark on GPU 0 and prints one line per type and size.
     *
     * @param args unused; {@code ITERS_SMALL} and {@code ITERS_LARGE} set the runs' lengths
     */
    public static void main(String[] args) {
        int itersSmall = Integer.parseInt(System.getenv().getOrDefault("ITERS_SMALL", "200"));
        int itersLarge = Integer.parseInt(System.getenv().getOrDefault("ITERS_LARGE", "20"));
        try (GpuWorld w = new GpuWorld()) {
            System.out.println(
                    "# djl-distributed raw NCCL "
                            + w.runtime.nccl().version()
                            + " from "
                            + w.runtime.nccl().path());
            NcclDataType[] types = {NcclDataType.FLOAT32, NcclDataType.BFLOAT16};
            for (NcclDataType type : types) {
                for (long bytes = 4096; bytes <= (1L << 30); bytes *= 4) {
                    LongByReference ptr = new LongByReference();
                    w.check(w.cu.cuMemAlloc_v2(ptr, bytes), "cuMemAlloc");
                    Pointer p = new Pointer(ptr.getValue());
                    long count = bytes / type.width();
                    int iters = bytes <= (1 << 20) ? itersSmall : itersLarge;
                    for (int i = 0; i < 5; ++i) {
                        launch(w, p, count, type);
                    }
                    w.check(w.cu.cuStreamSynchronize(w.stream), "cuStreamSynchronize");
                    long t0 = System.nanoTime();
                    for (int i = 0; i < iters; ++i) {
                        launch(w, p, count, type);
                    }
                    w.check(w.cu.cuStreamSynchronize(w.stream), "cuStreamSynchronize");
                    double seconds = (System.nanoTime() - t0) / 1e9 / iters;
                    System.out.printf(
                            "allreduce impl=djl-raw dtype=%s bytes=%d time_us=%.2f"
                                    + " algbw_GBps=%.3f%n",
                            type.name().toLowerCase(java.util.Locale.ROOT),
                            bytes,
                            seconds * 1e6,
                            bytes / seconds / 1e9);
                    w.cu.cuMemFree_v2(ptr.getValue());
                }
            }
        }
    }

    private static void launch(GpuWorld w, Pointer p, long count, NcclDataType type) {
        w.checkNccl(
                w.nccl.ncclAllReduce(
                        p, p, count, type.code(), NcclRedOp.AVG.code(), w.comm, w.stream),
                "ncclAllReduce");
    }
}
