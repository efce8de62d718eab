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
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.ndarray.types.DataType;

import com.sun.jna.NativeLibrary;
import com.sun.jna.ptr.PointerByReference;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Layer (ii) of the proof on a GPU: a CUDA tensor of the machine's own libtorch, made and read
 * through the stable C shim alone (no DJL JNI, which is built for another PyTorch), reduced in
 * place by NCCL at the address the shim gives. The machine's PyTorch is named by {@code
 * PYTORCH_LIBRARY_PATH}, DJL's variable for it, which the GPU kit's script sets from the {@code
 * python3} on {@code PATH}; loading its {@code libtorch_cuda.so} also maps the NCCL PyTorch was
 * built with, which the backend then uses (an NCCL already loaded is the only one tried).
 */
@Tag("gpu")
@Timeout(120)
class TorchShimGpuTest {

    private static final int COUNT = 1 << 20;

    @Test
    void ncclReducesATensorOfTheMachinesLibtorchAtItsShimAddress() {
        NativeLibrary torchCuda = CudaTensors.loadTorchCuda(); // held: stays loaded
        assertNotNull(torchCuda);
        try (GpuWorld w = new GpuWorld()) {
            DevicePointers pointers = DevicePointers.get(); // the libtorch_cpu.so just mapped
            TorchShim shim = pointers.shim();
            PointerByReference made = new PointerByReference();
            assertEquals(
                    0,
                    shim.aoti_torch_empty_strided(
                            1,
                            new long[] {COUNT},
                            new long[] {1},
                            shim.aoti_torch_dtype_float32(),
                            shim.aoti_torch_device_type_cuda(),
                            w.device,
                            made),
                    "aoti_torch_empty_strided on cuda:" + w.device);
            try {
                TensorView v =
                        pointers.view(made.getValue(), () -> "tensor [" + COUNT + "] on cuda");
                assertEquals(Device.Type.GPU, v.deviceType());
                assertEquals(w.device, v.deviceIndex());
                assertEquals(DataType.FLOAT32, v.dataType());
                assertEquals(COUNT, v.numel());
                assertTrue(v.isContiguous());
                DevicePointers.check(v, Device.gpu(w.device)); // accepted for NCCL
                float[] input = new float[COUNT];
                for (int i = 0; i < COUNT; ++i) {
                    input[i] = i % 777 - 300f;
                }
                w.upload(v.address(), input);
                int premul = w.premulSum(2f);
                try {
                    w.allReduce(v.address(), COUNT, premul);
                } finally {
                    w.destroy(premul);
                }
                float[] expected = new float[COUNT];
                for (int i = 0; i < COUNT; ++i) {
                    expected[i] = input[i] * 2f;
                }
                assertArrayEquals(expected, w.download(v.address(), COUNT));
            } finally {
                assertEquals(0, shim.aoti_torch_delete_tensor_object(made.getValue()));
            }
        }
    }
}
