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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Layer (i) of the proof on a GPU: NCCL and the CUDA driver API through this module's JNA bindings,
 * on raw device buffers, at world size 1 (one rank on one GPU). At one rank SUM, MAX and AVG leave
 * the values as they are, and PREMUL_SUM multiplies them by its scalar: a real kernel runs either
 * way. The expected values are computed here from the inputs, not by the code under test.
 *
 * <p>Tagged {@code gpu}: {@code mvn verify} never runs it; {@code mvn -P gpu test -pl nccl} and the
 * GPU kit ({@code bench/gpu/}) do, and it fails (never skips) where no GPU is usable.
 */
@Tag("gpu")
@Timeout(120)
class NcclRawGpuTest {

    private static final int COUNT = 1 << 20;

    @Test
    void communicatorOfOneRank() {
        try (GpuWorld w = new GpuWorld()) {
            IntByReference value = new IntByReference();
            w.checkNccl(w.nccl.ncclCommCount(w.comm, value), "ncclCommCount");
            assertEquals(1, value.getValue());
            w.checkNccl(w.nccl.ncclCommUserRank(w.comm, value), "ncclCommUserRank");
            assertEquals(0, value.getValue());
            w.checkNccl(w.nccl.ncclCommCuDevice(w.comm, value), "ncclCommCuDevice");
            assertEquals(w.device, value.getValue());
        }
    }

    @Test
    void allReduceInPlaceOnFloat32() {
        try (GpuWorld w = new GpuWorld()) {
            LongByReference ptr = new LongByReference();
            w.check(w.cu.cuMemAlloc_v2(ptr, (long) COUNT * Float.BYTES), "cuMemAlloc");
            long buffer = ptr.getValue();
            try {
                float[] input = new float[COUNT];
                for (int i = 0; i < COUNT; ++i) {
                    input[i] = (i % 1000) * 0.5f - 100f;
                }
                for (NcclRedOp op : new NcclRedOp[] {NcclRedOp.SUM, NcclRedOp.MAX, NcclRedOp.AVG}) {
                    w.upload(buffer, input);
                    w.allReduce(buffer, COUNT, op.code());
                    assertArrayEquals(input, w.download(buffer, COUNT), op + " of one rank");
                }
                int premul = w.premulSum(3f);
                try {
                    w.upload(buffer, input);
                    w.allReduce(buffer, COUNT, premul);
                    float[] expected = new float[COUNT];
                    for (int i = 0; i < COUNT; ++i) {
                        expected[i] = input[i] * 3f;
                    }
                    assertArrayEquals(expected, w.download(buffer, COUNT), "PREMUL_SUM by 3");
                } finally {
                    w.destroy(premul);
                }
            } finally {
                w.cu.cuMemFree_v2(buffer);
            }
        }
    }
}
