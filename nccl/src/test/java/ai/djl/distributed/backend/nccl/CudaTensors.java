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
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.ndarray.types.DataType;

import com.sun.jna.Memory;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * CUDA tensors of the machine's own libtorch, made, filled and read through the stable C shim and
 * the driver API alone (layer ii of the GPU proof: DJL's JNI is built for another PyTorch). The
 * machine's PyTorch is named by {@code PYTORCH_LIBRARY_PATH}; loading its {@code libtorch_cuda.so}
 * also maps the NCCL it was built with, which the backend then finds in the process.
 *
 * <p>Holds GPU 0's primary context, current on the creating thread.
 */
final class CudaTensors implements AutoCloseable {

    /** One tensor; closing deletes it (its memory returns to libtorch's caching allocator). */
    final class Tensor implements AutoCloseable {
        final Pointer handle;
        final TensorView view;

        Tensor(Pointer handle) {
            this.handle = handle;
            this.view = pointers.view(handle, () -> "shim tensor");
        }

        void write(ByteBuffer bytes) {
            Memory host = new Memory(bytes.remaining());
            host.getByteBuffer(0, host.size()).put(bytes.duplicate());
            check(cu.cuMemcpyHtoD_v2(view.address(), host, host.size()), "cuMemcpyHtoD");
        }

        void writeFloats(float... values) {
            ByteBuffer b = ByteBuffer.allocate(values.length * 4).order(ByteOrder.LITTLE_ENDIAN);
            b.asFloatBuffer().put(values);
            write(b);
        }

        ByteBuffer read() {
            long bytes = view.numel() * NcclOps.dataType(view.dataType()).width();
            Memory host = new Memory(Math.max(bytes, 1));
            check(cu.cuMemcpyDtoH_v2(host, view.address(), bytes), "cuMemcpyDtoH");
            ByteBuffer copy = ByteBuffer.allocate((int) bytes).order(ByteOrder.LITTLE_ENDIAN);
            copy.put(host.getByteBuffer(0, bytes));
            return copy.flip();
        }

        float[] readFloats() {
            ByteBuffer b = read();
            float[] out = new float[b.remaining() / 4];
            b.asFloatBuffer().get(out);
            return out;
        }

        @Override
        public void close() {
            assertEquals(0, shim.aoti_torch_delete_tensor_object(handle), "delete tensor");
        }
    }

    final NativeLibrary torchCuda;
    final NcclRuntime runtime;
    final CudaDriver cu;
    final DevicePointers pointers;
    final TorchShim shim;
    final int device = 0;
    private final Map<DataType, Integer> codes;

    CudaTensors() {
        // First libtorch_cuda, so that the probe finds the NCCL it maps (never a second one).
        torchCuda = loadTorchCuda(); // held: stays loaded
        runtime = NcclRuntime.probe();
        cu = runtime.driver();
        pointers = DevicePointers.get();
        shim = pointers.shim();
        codes =
                Map.of(
                        DataType.FLOAT32, shim.aoti_torch_dtype_float32(),
                        DataType.FLOAT16, shim.aoti_torch_dtype_float16(),
                        DataType.BFLOAT16, shim.aoti_torch_dtype_bfloat16(),
                        DataType.FLOAT64, shim.aoti_torch_dtype_float64(),
                        DataType.INT32, shim.aoti_torch_dtype_int32(),
                        DataType.INT64, shim.aoti_torch_dtype_int64(),
                        DataType.INT8, shim.aoti_torch_dtype_int8(),
                        DataType.UINT8, shim.aoti_torch_dtype_uint8(),
                        DataType.BOOLEAN, shim.aoti_torch_dtype_bool());
        IntByReference dev = new IntByReference();
        check(cu.cuDeviceGet(dev, device), "cuDeviceGet");
        PointerByReference ctx = new PointerByReference();
        check(cu.cuDevicePrimaryCtxRetain(ctx, dev.getValue()), "cuDevicePrimaryCtxRetain");
        check(cu.cuCtxSetCurrent(ctx.getValue()), "cuCtxSetCurrent");
    }

    /**
     * Loads the machine's {@code libtorch_cuda.so} from {@code PYTORCH_LIBRARY_PATH}.
     *
     * @return the library, to be held so that it stays loaded
     */
    static NativeLibrary loadTorchCuda() {
        String dir = System.getenv("PYTORCH_LIBRARY_PATH");
        assertNotNull(
                dir, "PYTORCH_LIBRARY_PATH: unset (expected: the lib folder of a CUDA PyTorch)");
        Path cudaLib = Path.of(dir, "libtorch_cuda.so");
        assertTrue(
                Files.exists(cudaLib), cudaLib + ": missing (expected: a CUDA build of PyTorch)");
        return NativeLibrary.getInstance(cudaLib.toString());
    }

    Device gpu() {
        return Device.gpu(device);
    }

    Tensor make(DataType type, long... shape) {
        PointerByReference made = new PointerByReference();
        Integer code = codes.get(type);
        assertNotNull(code, "no shim code for " + type);
        check(
                shim.aoti_torch_empty_strided(
                        shape.length,
                        shape,
                        DevicePointers.denseStrides(shape),
                        code,
                        shim.aoti_torch_device_type_cuda(),
                        device,
                        made),
                "aoti_torch_empty_strided");
        return new Tensor(made.getValue());
    }

    void check(int result, String call) {
        assertEquals(0, result, () -> call + " -> " + NcclRuntime.describe(cu, result));
    }

    @Override
    public void close() {
        check(cu.cuCtxSynchronize(), "cuCtxSynchronize");
        cu.cuDevicePrimaryCtxRelease_v2(device);
    }
}
