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

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.backend.nccl.CudaTensors.Tensor;
import ai.djl.distributed.store.FileStore;
import ai.djl.ndarray.types.DataType;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * One rank of a two-rank NCCL group on the machine's only GPU, for {@link NcclBackendGpuTest}: NCCL
 * before 2.30 refuses two ranks on one GPU, and both ranks must fail cleanly (no hang, no crash).
 * Prints {@link #FAILED} and NCCL's text, then exits 0; exits 1 if the all-reduce succeeds.
 */
public final class DuplicateGpuRank {

    /** The line's start on the expected failure. */
    static final String FAILED = "FAILED AS EXPECTED: ";

    private DuplicateGpuRank() {}

    /**
     * Runs one rank.
     *
     * @param args the file store's path and this rank
     */
    public static void main(String[] args) {
        int rank = Integer.parseInt(args[1]);
        try (CudaTensors gpu = new CudaTensors();
                FileStore store = new FileStore(Path.of(args[0]), 2);
                NcclBackend b =
                        NcclBackendGpuTest.world(store, rank, 2, Duration.ofSeconds(60), Map.of());
                Tensor t = gpu.make(DataType.FLOAT32, 16)) {
            NcclPlans plans = new NcclPlans(rank, 2);
            try {
                b.runOn(
                                "allReduce",
                                gpu.gpu(),
                                List.of(t.view),
                                v -> plans.allReduce(v, ReduceOp.SUM),
                                List.of(t),
                                true)
                        .waitFor();
                System.out.println("UNEXPECTED: the all-reduce succeeded on rank " + rank);
                System.exit(1);
            } catch (DistributedException e) {
                System.out.println(FAILED + e.getMessage());
            }
        }
        System.exit(0);
    }
}
