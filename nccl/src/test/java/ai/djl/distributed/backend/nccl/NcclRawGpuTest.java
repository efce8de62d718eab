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

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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
    private static final int SCALAR_HOST_IMMEDIATE = 1; // ncclScalarHostImmediate

    private NcclRuntime runtime;
    private CudaDriver cu;
    private NcclLibrary nccl;
    private int device;
    private Pointer stream;
    private Pointer comm;
    private long buffer;

    @BeforeEach
    void open() {
        runtime = NcclRuntime.probe(); // fails with what is missing, where no GPU is usable
        cu = runtime.driver();
        nccl = runtime.nccl().library();
        IntByReference dev = new IntByReference();
        check(cu.cuDeviceGet(dev, 0), "cuDeviceGet");
        device = dev.getValue();
        PointerByReference ctx = new PointerByReference();
        check(cu.cuDevicePrimaryCtxRetain(ctx, device), "cuDevicePrimaryCtxRetain");
        check(cu.cuCtxSetCurrent(ctx.getValue()), "cuCtxSetCurrent");
        PointerByReference s = new PointerByReference();
        check(cu.cuStreamCreate(s, 1), "cuStreamCreate"); // CU_STREAM_NON_BLOCKING
        stream = s.getValue();
        NcclUniqueId id = new NcclUniqueId();
        checkNccl(nccl.ncclGetUniqueId(id), "ncclGetUniqueId");
        PointerByReference c = new PointerByReference();
        checkNccl(
                nccl.ncclCommInitRankConfig(c, 1, id.byValue(), 0, new NcclConfig()),
                "ncclCommInitRankConfig");
        comm = c.getValue();
        LongByReference ptr = new LongByReference();
        check(cu.cuMemAlloc_v2(ptr, (long) COUNT * Float.BYTES), "cuMemAlloc");
        buffer = ptr.getValue();
    }

    @AfterEach
    void close() {
        if (buffer != 0) {
            cu.cuMemFree_v2(buffer);
        }
        if (comm != null) {
            nccl.ncclCommFinalize(comm);
            nccl.ncclCommDestroy(comm);
        }
        if (stream != null) {
            cu.cuStreamDestroy_v2(stream);
        }
        if (cu != null) {
            cu.cuDevicePrimaryCtxRelease_v2(device);
        }
    }

    @Test
    void communicatorOfOneRank() {
        IntByReference value = new IntByReference();
        checkNccl(nccl.ncclCommCount(comm, value), "ncclCommCount");
        assertEquals(1, value.getValue());
        checkNccl(nccl.ncclCommUserRank(comm, value), "ncclCommUserRank");
        assertEquals(0, value.getValue());
        checkNccl(nccl.ncclCommCuDevice(comm, value), "ncclCommCuDevice");
        assertEquals(device, value.getValue());
    }

    @Test
    void allReduceInPlaceOnFloat32() {
        float[] input = new float[COUNT];
        for (int i = 0; i < COUNT; ++i) {
            input[i] = (i % 1000) * 0.5f - 100f;
        }
        for (NcclRedOp op : new NcclRedOp[] {NcclRedOp.SUM, NcclRedOp.MAX, NcclRedOp.AVG}) {
            upload(input);
            allReduce(op.code());
            assertArrayEquals(input, download(), op + " of one rank leaves the values");
        }
        float scalar = 3f;
        Memory host = new Memory(Float.BYTES);
        host.setFloat(0, scalar);
        IntByReference premul = new IntByReference();
        checkNccl(
                nccl.ncclRedOpCreatePreMulSum(
                        premul, host, NcclDataType.FLOAT32.code(), SCALAR_HOST_IMMEDIATE, comm),
                "ncclRedOpCreatePreMulSum");
        try {
            upload(input);
            allReduce(premul.getValue());
            float[] expected = new float[COUNT];
            for (int i = 0; i < COUNT; ++i) {
                expected[i] = input[i] * scalar;
            }
            assertArrayEquals(expected, download(), "PREMUL_SUM by 3 at one rank");
        } finally {
            nccl.ncclRedOpDestroy(premul.getValue(), comm);
        }
    }

    private void allReduce(int op) {
        Pointer p = new Pointer(buffer);
        checkNccl(
                nccl.ncclAllReduce(p, p, COUNT, NcclDataType.FLOAT32.code(), op, comm, stream),
                "ncclAllReduce");
        check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    }

    private void upload(float[] values) {
        Memory host = new Memory((long) values.length * Float.BYTES);
        host.write(0, values, 0, values.length);
        check(cu.cuMemcpyHtoD_v2(buffer, host, host.size()), "cuMemcpyHtoD");
    }

    private float[] download() {
        Memory host = new Memory((long) COUNT * Float.BYTES);
        check(cu.cuMemcpyDtoH_v2(host, buffer, host.size()), "cuMemcpyDtoH");
        return host.getFloatArray(0, COUNT);
    }

    private void check(int result, String call) {
        assertEquals(0, result, () -> call + " -> " + NcclRuntime.describe(cu, result));
    }

    private void checkNccl(int result, String call) {
        assertEquals(
                0, result, () -> call + " -> " + result + " " + nccl.ncclGetErrorString(result));
    }
}
