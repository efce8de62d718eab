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

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import ai.djl.util.NativeResource;

import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Pointer;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The memory of DJL's PyTorch arrays, read through libtorch's stable C shim ({@link TorchShim}) on
 * {@code PtNDArray.getHandle()}: no copy, no C++ call that could throw into the JVM. DJL has no
 * pointer API for GPU arrays ({@code toByteBuffer} copies to the host); the shim's getters work
 * alike on every device, so the path that serves NCCL is the one tested on CPU arrays.
 *
 * <p>The shim is bound on the libtorch this process has already loaded (found in {@code
 * /proc/self/maps}), once. Thread-safe. The arrays stay owned by the caller; a view is valid while
 * its array is open.
 */
public final class DevicePointers {

    private static final String LIBTORCH = "libtorch_cpu.so";

    private static volatile DevicePointers instance;

    // Slots of the per-thread block the shim's getters answer in (int answers in the low bytes).
    private static final long DATA = 0;
    private static final long DEVICE_TYPE = 8;
    private static final long DEVICE_INDEX = 16;
    private static final long DTYPE = 24;
    private static final long NUMEL = 32;
    private static final long DIM = 40;
    private static final long OFFSET = 48;
    private static final long SIZES = 56;
    private static final long STRIDES = 64;
    private static final ThreadLocal<Memory> SCRATCH =
            ThreadLocal.withInitial(() -> new Memory(72));

    private final TorchShim shim;
    private final int cpu;
    private final int cuda;
    private final Map<Integer, DataType> types;

    private DevicePointers(TorchShim shim) {
        this.shim = shim;
        this.cpu = shim.aoti_torch_device_type_cpu();
        this.cuda = shim.aoti_torch_device_type_cuda();
        Map<Integer, DataType> t = new HashMap<>();
        t.put(shim.aoti_torch_dtype_bool(), DataType.BOOLEAN);
        t.put(shim.aoti_torch_dtype_uint8(), DataType.UINT8);
        t.put(shim.aoti_torch_dtype_int8(), DataType.INT8);
        t.put(shim.aoti_torch_dtype_int16(), DataType.INT16);
        t.put(shim.aoti_torch_dtype_int32(), DataType.INT32);
        t.put(shim.aoti_torch_dtype_int64(), DataType.INT64);
        t.put(shim.aoti_torch_dtype_uint32(), DataType.UINT32);
        t.put(shim.aoti_torch_dtype_uint64(), DataType.UINT64);
        t.put(shim.aoti_torch_dtype_float16(), DataType.FLOAT16);
        t.put(shim.aoti_torch_dtype_bfloat16(), DataType.BFLOAT16);
        t.put(shim.aoti_torch_dtype_float32(), DataType.FLOAT32);
        t.put(shim.aoti_torch_dtype_float64(), DataType.FLOAT64);
        this.types = Map.copyOf(t);
    }

    /**
     * Returns the instance bound on this process's libtorch.
     *
     * @return the instance
     * @throws IllegalStateException if no libtorch is loaded (no PyTorch array was made yet)
     */
    public static DevicePointers get() {
        DevicePointers d = instance;
        if (d == null) {
            synchronized (DevicePointers.class) {
                d = instance;
                if (d == null) {
                    d =
                            new DevicePointers(
                                    Native.load(
                                            libtorch(ProcessMaps.ofThisProcess()),
                                            TorchShim.class));
                    instance = d;
                }
            }
        }
        return d;
    }

    /**
     * What to load to get the libtorch mapped in a process: its path, or its soname where its file
     * was replaced on disk since ({@link ProcessMaps#loadName}).
     *
     * @param maps the process's mapped files
     * @return the path or soname
     * @throws IllegalStateException if no libtorch is mapped
     */
    static String libtorch(ProcessMaps maps) {
        Path lib =
                maps.first(LIBTORCH)
                        .orElseThrow(
                                () ->
                                        new IllegalStateException(
                                                LIBTORCH
                                                        + ": not loaded in this process (expected:"
                                                        + " DJL's PyTorch engine, loaded by making"
                                                        + " an array)"));
        return ProcessMaps.loadName(lib, LIBTORCH);
    }

    /** The shim this instance is bound on (tests make tensors with it). */
    TorchShim shim() {
        return shim;
    }

    /**
     * Reads what libtorch knows of an array.
     *
     * @param array an open array of DJL's PyTorch engine
     * @return its view
     * @throws IllegalArgumentException if the array is not a PyTorch one, or is closed
     * @throws IllegalStateException if a shim call fails
     */
    public TensorView view(NDArray array) {
        Pointer t = handleOf(array);
        return view(t, () -> "array " + array.getShape());
    }

    /**
     * Reads what libtorch knows of a tensor handle ({@code AtenTensorHandle}), made by DJL or by
     * the shim itself.
     *
     * @param t the tensor; borrowed, not freed
     * @param what names the tensor in errors (built only for one)
     * @return its view
     * @throws IllegalStateException if a shim call fails
     */
    TensorView view(Pointer t, Supplier<String> what) {
        Memory out = SCRATCH.get(); // one slot per answer, 8 bytes each
        check(shim.aoti_torch_get_data_ptr(t, out.share(DATA)), "aoti_torch_get_data_ptr", what);
        check(shim.aoti_torch_get_device_type(t, out.share(DEVICE_TYPE)), "get_device_type", what);
        check(
                shim.aoti_torch_get_device_index(t, out.share(DEVICE_INDEX)),
                "get_device_index",
                what);
        check(shim.aoti_torch_get_dtype(t, out.share(DTYPE)), "aoti_torch_get_dtype", what);
        check(shim.aoti_torch_get_numel(t, out.share(NUMEL)), "aoti_torch_get_numel", what);
        check(shim.aoti_torch_get_dim(t, out.share(DIM)), "aoti_torch_get_dim", what);
        check(shim.aoti_torch_get_storage_offset(t, out.share(OFFSET)), "get_storage_offset", what);
        int n = (int) out.getLong(DIM);
        long[] shape = new long[n];
        long[] strides = new long[n];
        if (n > 0) {
            // Borrowed from the tensor: copied out at once.
            check(shim.aoti_torch_get_sizes(t, out.share(SIZES)), "aoti_torch_get_sizes", what);
            out.getPointer(SIZES).read(0, shape, 0, n);
            check(shim.aoti_torch_get_strides(t, out.share(STRIDES)), "get_strides", what);
            out.getPointer(STRIDES).read(0, strides, 0, n);
        }
        int type = out.getInt(DEVICE_TYPE);
        String djlType =
                type == cpu ? Device.Type.CPU : type == cuda ? Device.Type.GPU : "torch:" + type;
        int dtype = out.getInt(DTYPE);
        return new TensorView(
                out.getLong(DATA),
                djlType,
                out.getInt(DEVICE_INDEX),
                types.get(dtype),
                dtype,
                out.getLong(NUMEL),
                out.getLong(OFFSET),
                shape,
                strides);
    }

    /**
     * Reads an array that a collective on one device is about to use, refusing what NCCL cannot
     * take: another device, a layout that is not contiguous, a type NCCL has no code for.
     *
     * @param array an open array of DJL's PyTorch engine
     * @param device the device the backend serves
     * @return its view, with {@link NcclOps#dataType} defined for its type
     * @throws IllegalArgumentException naming the array's shape, type and device, and what was
     *     expected
     */
    public TensorView require(NDArray array, Device device) {
        return check(view(array), device);
    }

    /**
     * Checks a view against what NCCL takes on one device.
     *
     * @param v the view
     * @param device the device the backend serves
     * @return the view
     * @throws IllegalArgumentException naming the tensor and what was expected
     */
    static TensorView check(TensorView v, Device device) {
        int index = device.getDeviceId();
        boolean sameDevice =
                v.deviceType().equals(device.getDeviceType())
                        && (device.getDeviceType().equals(Device.Type.CPU)
                                || v.deviceIndex() == index);
        if (!sameDevice) {
            throw new IllegalArgumentException(
                    "array: " + v + " (expected: on " + device + ", the backend's device)");
        }
        if (!v.isContiguous()) {
            throw new IllegalArgumentException(
                    "array: "
                            + v
                            + " is not contiguous (expected: row-major dense strides "
                            + Arrays.toString(denseStrides(v.shape()))
                            + "; pass a contiguous copy)");
        }
        if (v.dataType() == null || !NcclOps.supports(v.dataType())) {
            throw new IllegalArgumentException(
                    "array: "
                            + v
                            + " has a type NCCL cannot carry (expected one of "
                            + NcclOps.supportedTypes()
                            + ")");
        }
        return v;
    }

    static long[] denseStrides(long[] shape) {
        long[] s = new long[shape.length];
        long step = 1;
        for (int d = shape.length - 1; d >= 0; d--) {
            s[d] = step;
            step *= Math.max(shape[d], 1);
        }
        return s;
    }

    private static Pointer handleOf(NDArray array) {
        String engine = array.getManager().getEngine().getEngineName();
        if (!"PyTorch".equals(engine) || !(array instanceof NativeResource<?> resource)) {
            throw new IllegalArgumentException(
                    "array: "
                            + array.getShape()
                            + " "
                            + array.getDataType()
                            + " of engine "
                            + engine
                            + " (expected: an array of DJL's PyTorch engine)");
        }
        if (resource.isReleased()) {
            throw new IllegalArgumentException("array: closed (expected: an open array)");
        }
        if (!(resource.getHandle() instanceof Long handle) || handle == 0L) {
            throw new IllegalArgumentException(
                    "array: handle " + resource.getHandle() + " (expected: a tensor pointer)");
        }
        return new Pointer(handle);
    }

    private static void check(int error, String call, Supplier<String> what) {
        if (error != 0) {
            throw new IllegalStateException(call + " returned " + error + " for " + what.get());
        }
    }
}
