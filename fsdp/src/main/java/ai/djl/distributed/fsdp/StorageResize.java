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
package ai.djl.distributed.fsdp;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.pytorch.engine.PtNDArray;

import com.sun.jna.Function;
import com.sun.jna.Memory;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Frees the memory under a CPU array and allocates it again, in place, as PyTorch's FSDP does with
 * {@code storage.resize_(0)}: every view of the array, and every reference autograd saved to one,
 * keeps the same storage object, so a unit's gathered parameters can be freed after its forward
 * pass and gathered again into the same storage for its backward, with no recompute.
 *
 * <p>DJL offers no such call. It is made with libtorch's exported {@code
 * at::native::resize_bytes_cpu(c10::StorageImpl*, size_t)}, on the storage found from DJL's tensor
 * handle ({@code at::Tensor*}, whose one field is the {@code TensorImpl*}, whose first field after
 * its reference counts is the storage). Those are layouts of libtorch's C++ classes, not a stable
 * interface, so they are checked once per process on a probe array against what libtorch's stable C
 * shim reports (data pointer, storage size), and each array's storage is checked again before each
 * call (CPU, resizable, with an allocator, of the size expected): a C++ exception cannot cross JNA
 * and would end the process. Where a check fails (another libtorch, a GPU array), {@link #get} says
 * why and FSDP recomputes instead. The one failure left that ends the process is the C heap running
 * out in {@link #restore} (libtorch's allocator throws).
 *
 * <p>Thread-safe; an array's storage must not be read or written by anyone while it is resized.
 */
final class StorageResize {

    private static final java.util.Set<String> KNOWN = java.util.Set.of("2.7.1");
    private static final String SYMBOL = "_ZN2at6native16resize_bytes_cpuEPN3c1011StorageImplEm";
    private static final int TENSOR_STORAGE = 16; // after TensorImpl's vptr and two uint32 counts
    private static final int STORAGE_DATA = 16; // StorageImpl's DataPtr, whose first field is data
    private static final int STORAGE_NBYTES = 48; // size_bytes_, after the DataPtr's 32 bytes
    private static final int STORAGE_HEAP_SIZE = 56; // size_bytes_is_heap_allocated_
    private static final int STORAGE_RESIZABLE = 57; // after size_bytes_is_heap_allocated_
    // throw_on_immutable_data_ptr_: resize_bytes_cpu reads data_ptr(), which throws when it is set
    private static final int STORAGE_THROW_ON_DATA = 61;
    private static final int STORAGE_ALLOCATOR = 64;
    private static final int CPU = 0; // c10::DeviceType::CPU, as aoti_torch_device_type_cpu()

    private static volatile Optional<StorageResize> instance;
    private static volatile String unavailable;

    private final Function resize;
    private final Function dataPtr;
    private final Function storageSize;
    private final Function deviceType;

    private StorageResize(NativeLibrary torch) {
        resize = torch.getFunction(SYMBOL);
        dataPtr = torch.getFunction("aoti_torch_get_data_ptr");
        storageSize = torch.getFunction("aoti_torch_get_storage_size");
        deviceType = torch.getFunction("aoti_torch_get_device_type");
    }

    /**
     * Returns the resizer of this process's libtorch, checked on a probe array; empty, with {@link
     * #whyUnavailable} set, where it cannot be used.
     *
     * @param manager a manager of DJL's PyTorch engine to make the probe in (the probe is freed)
     * @return the resizer, or empty
     */
    static Optional<StorageResize> get(NDManager manager) {
        Optional<StorageResize> r = instance;
        if (r == null) {
            synchronized (StorageResize.class) {
                r = instance;
                if (r == null) {
                    r = probe(manager);
                    instance = r;
                }
            }
        }
        return r;
    }

    /** Why {@link #get} found no resizer, or null. */
    static String whyUnavailable() {
        return unavailable;
    }

    private static Optional<StorageResize> probe(NDManager manager) {
        try (NDManager scope = manager.newSubManager(ai.djl.Device.cpu())) {
            String version = ai.djl.engine.Engine.getEngine("PyTorch").getVersion();
            if (!KNOWN.contains(version)) {
                // the layouts below were read from this libtorch; reading another's could crash
                return none(
                        "libtorch " + version + " (its C++ layouts are known for " + KNOWN + ")");
            }
            Optional<String> lib = libtorch();
            if (lib.isEmpty()) {
                return none("libtorch_cpu.so is not mapped in this process");
            }
            StorageResize r = new StorageResize(NativeLibrary.getInstance(lib.get()));
            NDArray probe = scope.zeros(new Shape(12), DataType.FLOAT32);
            Pointer storage = r.storage(probe, 48);
            r.call(storage, 0);
            if (r.bytes(probe) != 0 || storage.getLong(STORAGE_NBYTES) != 0) {
                return none("a probe's storage did not shrink to 0 bytes");
            }
            r.call(storage, 48);
            if (r.bytes(probe) != 48 || storage.getLong(STORAGE_DATA) != r.data(probe)) {
                return none("a probe's storage did not grow back to 48 bytes");
            }
            return Optional.of(r);
        } catch (UnsatisfiedLinkError | IllegalStateException | IOException e) {
            return none(e.getMessage());
        }
    }

    private static Optional<StorageResize> none(String why) {
        unavailable = why;
        return Optional.empty();
    }

    private static Optional<String> libtorch() throws IOException {
        try (Stream<String> maps = Files.lines(Paths.get("/proc/self/maps"))) {
            return maps.filter(l -> l.endsWith("/libtorch_cpu.so"))
                    .map(l -> l.substring(l.indexOf('/')))
                    .findFirst();
        }
    }

    /**
     * Frees the memory under a contiguous CPU array; its views see an empty storage until {@link
     * #restore}.
     *
     * @param array a float32 array made by libtorch (resizable storage), of its storage's size
     * @throws IllegalStateException if the array's storage is not as expected (nothing is changed)
     */
    void free(NDArray array) {
        call(storage(array, array.size() * Float.BYTES), 0);
    }

    /**
     * Allocates the memory of a freed array again, with unspecified contents.
     *
     * @param array an array {@link #free} freed
     * @throws IllegalStateException if the array's storage is not as {@link #free} left it
     */
    void restore(NDArray array) {
        call(storage(array, 0), array.size() * Float.BYTES);
    }

    /**
     * Whether an array shares its storage with another (is a view of it, or it of the array): its
     * memory is the other's, and freeing one frees what the other reads.
     *
     * @param array an array of DJL's PyTorch engine (any other shares no storage with one)
     * @param other an array of DJL's PyTorch engine
     * @return whether both have the same storage object
     */
    boolean sharesStorage(NDArray array, NDArray other) {
        if (!(array instanceof PtNDArray) || !(other instanceof PtNDArray)) {
            return false;
        }
        Pointer a = storageOf(handle(array));
        return a != null && a.equals(storageOf(handle(other)));
    }

    // TensorImpl's storage_ (null for a tensor without storage), read at the layout probed.
    private static Pointer storageOf(Pointer tensor) {
        Pointer impl = tensor.getPointer(0);
        return impl == null ? null : impl.getPointer(TENSOR_STORAGE);
    }

    /** Whether an array's memory is freed. */
    boolean isFreed(NDArray array) {
        return bytes(array) == 0 && array.size() > 0;
    }

    private void call(Pointer storage, long bytes) {
        resize.invokeVoid(new Object[] {storage, bytes});
    }

    // The storage of an array, after checking everything resize_bytes_cpu would TORCH_CHECK.
    private Pointer storage(NDArray array, long expectedBytes) {
        Pointer tensor = handle(array);
        Memory ret = new Memory(Long.BYTES);
        check(deviceType.invokeInt(new Object[] {tensor, ret}), "device type");
        if (ret.getInt(0) != CPU) {
            throw new IllegalStateException(array.getDevice() + ": not a CPU array");
        }
        Pointer storage = storageOf(tensor);
        long bytes = bytes(array);
        if (storage == null
                || bytes != expectedBytes
                || storage.getLong(STORAGE_NBYTES) != bytes
                || (bytes > 0 && storage.getLong(STORAGE_DATA) != data(array))
                || storage.getByte(STORAGE_HEAP_SIZE) != 0
                || storage.getByte(STORAGE_RESIZABLE) != 1
                || storage.getByte(STORAGE_THROW_ON_DATA) != 0
                || storage.getPointer(STORAGE_ALLOCATOR) == null) {
            throw new IllegalStateException(
                    "storage of "
                            + bytes
                            + " bytes (expected: a resizable storage of "
                            + expectedBytes
                            + " bytes at libtorch's known layout)");
        }
        return storage;
    }

    private long bytes(NDArray array) {
        Memory ret = new Memory(Long.BYTES);
        check(storageSize.invokeInt(new Object[] {handle(array), ret}), "storage size");
        return ret.getLong(0);
    }

    private long data(NDArray array) {
        Memory ret = new Memory(Long.BYTES);
        check(dataPtr.invokeInt(new Object[] {handle(array), ret}), "data pointer");
        return ret.getLong(0);
    }

    private static Pointer handle(NDArray array) {
        if (!(array instanceof PtNDArray)) {
            throw new IllegalStateException(
                    array.getClass().getName() + ": not an array of DJL's PyTorch engine");
        }
        return new Pointer(((PtNDArray) array).getHandle());
    }

    private static void check(int code, String what) {
        if (code != 0) {
            throw new IllegalStateException("aoti_torch_get " + what + ": error " + code);
        }
    }
}
