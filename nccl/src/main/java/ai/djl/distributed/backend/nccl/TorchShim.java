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

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

/**
 * libtorch's stable C shim (AOTInductor's {@code shim.h}, {@code extern "C"}): getters on a tensor
 * handle ({@code AtenTensorHandle}, which is the {@code at::Tensor*} DJL's {@code
 * PtNDArray.getHandle()} holds) that return an error code instead of throwing into the JVM. Every
 * getter returns 0 on success. The constants' functions return PyTorch's codes of dtypes and device
 * types, so no code is written down here.
 *
 * <p>Bound on the libtorch already loaded ({@link DevicePointers}). PyTorch 2.7.1's {@code
 * libtorch_cpu.so} has every symbol here but no {@code aoti_torch_is_contiguous} (added later), so
 * contiguity is computed from sizes and strides.
 */
@SuppressWarnings("checkstyle:MethodName")
interface TorchShim extends Library {

    // The getters write their answer at {@code ret}: a slot of one reused block (DevicePointers'
    // scratch), since a JNA ByReference per answer allocates native memory on every call.

    int aoti_torch_get_data_ptr(Pointer tensor, Pointer ret);

    int aoti_torch_get_device_type(Pointer tensor, Pointer ret);

    int aoti_torch_get_device_index(Pointer tensor, Pointer ret);

    int aoti_torch_get_dtype(Pointer tensor, Pointer ret);

    int aoti_torch_get_numel(Pointer tensor, Pointer ret);

    int aoti_torch_get_dim(Pointer tensor, Pointer ret);

    int aoti_torch_get_sizes(Pointer tensor, Pointer ret);

    int aoti_torch_get_strides(Pointer tensor, Pointer ret);

    int aoti_torch_get_storage_offset(Pointer tensor, Pointer ret);

    int aoti_torch_device_type_cpu();

    int aoti_torch_device_type_cuda();

    int aoti_torch_dtype_bool();

    int aoti_torch_dtype_uint8();

    int aoti_torch_dtype_int8();

    int aoti_torch_dtype_int16();

    int aoti_torch_dtype_int32();

    int aoti_torch_dtype_int64();

    int aoti_torch_dtype_uint32();

    int aoti_torch_dtype_uint64();

    int aoti_torch_dtype_float16();

    int aoti_torch_dtype_bfloat16();

    int aoti_torch_dtype_float32();

    int aoti_torch_dtype_float64();

    /**
     * {@code aoti_torch_empty_strided}: a new uninitialised tensor, owned by the caller (free it
     * with {@link #aoti_torch_delete_tensor_object}). The tests make tensors of the machine's own
     * libtorch with it, without DJL.
     */
    int aoti_torch_empty_strided(
            long ndim,
            long[] sizes,
            long[] strides,
            int dtype,
            int deviceType,
            int deviceIndex,
            PointerByReference ret);

    /** {@code aoti_torch_delete_tensor_object}: frees a tensor made through the shim. */
    int aoti_torch_delete_tensor_object(Pointer tensor);
}
