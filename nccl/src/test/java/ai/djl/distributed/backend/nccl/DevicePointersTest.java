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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import com.sun.jna.Native;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.List;

/** The shim path on CPU arrays: the same getters serve GPU arrays. */
class DevicePointersTest {

    private static NDManager manager;

    @BeforeAll
    static void open() {
        manager = NDManager.newBaseManager(Device.cpu(), "PyTorch");
    }

    @AfterAll
    static void close() {
        manager.close();
    }

    /** The array's own memory as DJL hands it out (a direct buffer on a contiguous CPU array). */
    private static long directAddress(NDArray a) {
        ByteBuffer b = a.toByteBuffer(true);
        assertTrue(b.isDirect(), "expected DJL to hand out the array's own memory");
        return Pointer.nativeValue(Native.getDirectBufferPointer(b));
    }

    @Test
    void aLibtorchMappedFromAFileSinceReplacedIsLoadedBySoname() {
        String lib = "/site/torch/lib/libtorch_cpu.so";
        assertEquals(
                lib,
                DevicePointers.libtorch(ProcessMaps.parse(List.of("7f-80 r-xp 0 08:01 7 " + lib))));
        // By path, the loader would find nothing, or load the new file as a second libtorch.
        assertEquals(
                "libtorch_cpu.so",
                DevicePointers.libtorch(
                        ProcessMaps.parse(List.of("7f-80 r-xp 0 08:01 7 " + lib + " (deleted)"))));
    }

    @Test
    void theShimPointerIsTheArraysMemory() {
        try (NDManager m = manager.newSubManager()) {
            NDArray a = m.arange(24f).reshape(4, 6);
            TensorView v = DevicePointers.get().view(a);
            assertEquals(directAddress(a), v.address());
            assertEquals(Device.Type.CPU, v.deviceType());
            assertEquals(DataType.FLOAT32, v.dataType());
            assertEquals(24, v.numel());
            assertEquals(0, v.storageOffset());
            assertArrayEquals(new long[] {4, 6}, v.shape());
            assertArrayEquals(new long[] {6, 1}, v.strides());
            assertTrue(v.isContiguous());
            // The pointer reads the array's values.
            assertEquals(13f, new Pointer(v.address()).getFloat(13 * 4L));
        }
    }

    @Test
    void viewsIncludeTheirStorageOffset() {
        try (NDManager m = manager.newSubManager()) {
            NDArray a = m.arange(24f).reshape(4, 6);
            long base = DevicePointers.get().view(a).address();
            NDArray rows = a.get("2:");
            TensorView v = DevicePointers.get().view(rows);
            assertEquals(12, v.storageOffset());
            assertEquals(base + 12 * Float.BYTES, v.address());
            assertEquals(directAddress(rows), v.address());
            assertArrayEquals(new long[] {2, 6}, v.shape());
            assertEquals(12, v.numel());
            assertTrue(v.isContiguous());
            assertEquals(12f, new Pointer(v.address()).getFloat(0));
        }
    }

    // No BFLOAT16 nor INT16: DJL 0.35.1's PyTorch engine aborts the JVM ("terminate called without
    // an active exception") when it creates such an NDArray (see the plugin's CollectiveSuiteTest).
    @Test
    void everyTypeIsNamedAsDjlNamesIt() {
        List<DataType> types =
                List.of(
                        DataType.FLOAT16,
                        DataType.FLOAT32,
                        DataType.FLOAT64,
                        DataType.INT8,
                        DataType.UINT8,
                        DataType.INT32,
                        DataType.INT64,
                        DataType.BOOLEAN);
        try (NDManager m = manager.newSubManager()) {
            for (DataType t : types) {
                NDArray a = m.zeros(new Shape(3), t);
                assertEquals(t, DevicePointers.get().view(a).dataType(), t.toString());
            }
        }
    }

    @Test
    void aTransposedArrayIsRefused() {
        try (NDManager m = manager.newSubManager()) {
            NDArray t = m.arange(24f).reshape(4, 6).transpose();
            TensorView v = DevicePointers.get().view(t);
            assertFalse(v.isContiguous());
            assertArrayEquals(new long[] {1, 6}, v.strides());
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> DevicePointers.get().require(t, Device.cpu()));
            assertTrue(e.getMessage().contains("[6, 4]"), e.getMessage());
            assertTrue(e.getMessage().contains("not contiguous"), e.getMessage());
            assertTrue(e.getMessage().contains("[4, 1]"), e.getMessage());
        }
    }

    @Test
    void tensorsMadeThroughTheShimAreViewedAsMade() {
        try (NDManager m = manager.newSubManager()) {
            m.zeros(new Shape(1)); // libtorch is loaded
        }
        DevicePointers pointers = DevicePointers.get();
        TorchShim shim = pointers.shim();
        int float32 = shim.aoti_torch_dtype_float32();
        int cpu = shim.aoti_torch_device_type_cpu();
        long[][] stridesOf = {{4, 1}, {1, 3}}; // row-major, then column-major
        for (long[] strides : stridesOf) {
            PointerByReference made = new PointerByReference();
            assertEquals(
                    0,
                    shim.aoti_torch_empty_strided(
                            2, new long[] {3, 4}, strides, float32, cpu, 0, made));
            try {
                TensorView v = pointers.view(made.getValue(), () -> "tensor [3, 4]");
                assertArrayEquals(new long[] {3, 4}, v.shape());
                assertArrayEquals(strides, v.strides());
                assertEquals(12, v.numel());
                assertEquals(DataType.FLOAT32, v.dataType());
                assertEquals(Device.Type.CPU, v.deviceType());
                assertEquals(0, v.storageOffset());
                assertTrue(v.address() != 0);
                assertEquals(strides[1] == 1, v.isContiguous(), Arrays.toString(strides));
            } finally {
                assertEquals(0, shim.aoti_torch_delete_tensor_object(made.getValue()));
            }
        }
    }

    @Test
    void theWrongDeviceAndUnsupportedTypesAreRefused() {
        try (NDManager m = manager.newSubManager()) {
            NDArray a = m.ones(new Shape(2, 3));
            assertEquals(
                    DevicePointers.get().view(a).address(),
                    DevicePointers.get().require(a, Device.cpu()).address());
            IllegalArgumentException device =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> DevicePointers.get().require(a, Device.gpu(0)));
            assertTrue(device.getMessage().contains("on cpu"), device.getMessage());
            assertTrue(device.getMessage().contains("gpu(0)"), device.getMessage());
            assertTrue(device.getMessage().contains("[2, 3]"), device.getMessage());
        }
        // Types NCCL lacks, on views as the shim reports them (DJL cannot make int16 arrays).
        TensorView shorts =
                new TensorView(
                        0x1000, "cpu", -1, DataType.INT16, 2, 5, 0, new long[] {5}, new long[] {1});
        IllegalArgumentException type =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> DevicePointers.check(shorts, Device.cpu()));
        assertTrue(type.getMessage().contains("[5] int16"), type.getMessage());
        assertTrue(type.getMessage().contains("NCCL cannot carry"), type.getMessage());
        TensorView unnamed =
                new TensorView(0x1000, "cpu", -1, null, 9, 5, 0, new long[] {5}, new long[] {1});
        IllegalArgumentException complex =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> DevicePointers.check(unnamed, Device.cpu()));
        assertTrue(complex.getMessage().contains("torch dtype 9"), complex.getMessage());
        TensorView gpu1 =
                new TensorView(
                        0x1000,
                        "gpu",
                        1,
                        DataType.FLOAT32,
                        6,
                        5,
                        0,
                        new long[] {5},
                        new long[] {1});
        assertEquals(gpu1, DevicePointers.check(gpu1, Device.gpu(1)));
        IllegalArgumentException otherGpu =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> DevicePointers.check(gpu1, Device.gpu(0)));
        assertTrue(otherGpu.getMessage().contains("on gpu(1)"), otherGpu.getMessage());
    }

    @Test
    void closedArraysAreRefused() {
        NDArray a = manager.ones(new Shape(2));
        a.close();
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> DevicePointers.get().view(a));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
    }

    @Test
    void contiguityFollowsPyTorchsRule() {
        assertTrue(TensorView.isContiguous(new long[] {}, new long[] {}));
        assertTrue(TensorView.isContiguous(new long[] {3, 1, 2}, new long[] {2, 99, 1}));
        assertTrue(TensorView.isContiguous(new long[] {0, 5}, new long[] {1, 7}));
        assertFalse(TensorView.isContiguous(new long[] {2, 3}, new long[] {1, 2}));
        assertFalse(TensorView.isContiguous(new long[] {2, 3}, new long[] {6, 2}));
        assertArrayEquals(new long[] {12, 4, 1}, DevicePointers.denseStrides(new long[] {2, 3, 4}));
    }
}
