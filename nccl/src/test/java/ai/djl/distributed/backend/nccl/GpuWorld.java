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

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * For the GPU tests: a world of one rank on GPU 0, through this module's bindings alone: the
 * primary context made current on the calling thread, a stream of its own, and a communicator of
 * one rank. Every call is checked, its failure naming the call and the error's name. Not
 * thread-safe.
 */
final class GpuWorld implements AutoCloseable {

    private static final int SCALAR_HOST_IMMEDIATE = 1; // ncclScalarHostImmediate

    final NcclRuntime runtime = NcclRuntime.probe(); // fails naming what is missing
    final CudaDriver cu = runtime.driver();
    final NcclLibrary nccl = runtime.nccl().library();
    final int device;
    final Pointer stream;
    final Pointer comm;

    GpuWorld() {
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
    }

    /** An all-reduce of float32s in place, waited for on the host. */
    void allReduce(long address, long count, int op) {
        Pointer p = new Pointer(address);
        checkNccl(
                nccl.ncclAllReduce(p, p, count, NcclDataType.FLOAT32.code(), op, comm, stream),
                "ncclAllReduce");
        check(cu.cuStreamSynchronize(stream), "cuStreamSynchronize");
    }

    /** A PREMUL_SUM of float32s by a scalar passed by value; destroy it with {@link #destroy}. */
    int premulSum(float scalar) {
        Memory host = new Memory(Float.BYTES);
        host.setFloat(0, scalar);
        IntByReference op = new IntByReference();
        checkNccl(
                nccl.ncclRedOpCreatePreMulSum(
                        op, host, NcclDataType.FLOAT32.code(), SCALAR_HOST_IMMEDIATE, comm),
                "ncclRedOpCreatePreMulSum");
        return op.getValue();
    }

    void destroy(int op) {
        checkNccl(nccl.ncclRedOpDestroy(op, comm), "ncclRedOpDestroy");
    }

    void upload(long address, float[] values) {
        Memory host = new Memory((long) values.length * Float.BYTES);
        host.write(0, values, 0, values.length);
        check(cu.cuMemcpyHtoD_v2(address, host, host.size()), "cuMemcpyHtoD");
    }

    float[] download(long address, int count) {
        Memory host = new Memory((long) count * Float.BYTES);
        check(cu.cuMemcpyDtoH_v2(host, address, host.size()), "cuMemcpyDtoH");
        return host.getFloatArray(0, count);
    }

    void check(int result, String call) {
        assertEquals(0, result, () -> call + " -> " + NcclRuntime.describe(cu, result));
    }

    void checkNccl(int result, String call) {
        assertEquals(
                0, result, () -> call + " -> " + result + " " + nccl.ncclGetErrorString(result));
    }

    /** Finalizes and destroys the communicator, the stream, and releases the context. */
    @Override
    public void close() {
        nccl.ncclCommFinalize(comm);
        nccl.ncclCommDestroy(comm);
        cu.cuStreamDestroy_v2(stream);
        cu.cuDevicePrimaryCtxRelease_v2(device);
    }
}
