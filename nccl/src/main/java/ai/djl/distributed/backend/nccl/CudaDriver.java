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
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The part of the CUDA driver API ({@code libcuda.so.1}, present wherever the driver is) that the
 * backend needs: initialisation, the device's primary context (which the CUDA runtime, NCCL's and
 * PyTorch's included, shares), streams and events to order NCCL's work after the caller's, and raw
 * device memory for tests without PyTorch. NCCL links its CUDA runtime statically, so the driver
 * API is the one CUDA library every process has.
 *
 * <p>Every function returns a {@code CUresult} (0 is {@code CUDA_SUCCESS}; {@link CudaResult}). A
 * {@code CUstream} is a {@code cudaStream_t}; a {@code CUdeviceptr} is a {@code long}. The {@code
 * _v2} symbols are the ones {@code cuda.h} maps the plain names to, hence the C spelling of the
 * method names (JNA binds each method to the symbol of its name).
 */
@SuppressWarnings("checkstyle:MethodName")
public interface CudaDriver extends Library {

    /** The library's name for the system loader. */
    String LIBRARY = "libcuda.so.1";

    /** {@code CU_STREAM_NON_BLOCKING}: a stream that does not wait on the legacy default one. */
    int STREAM_NON_BLOCKING = 0x1;

    /** {@code CU_EVENT_DISABLE_TIMING}: an event for ordering only (cheaper). */
    int EVENT_DISABLE_TIMING = 0x2;

    /**
     * {@code cuInit}.
     *
     * @param flags 0
     * @return the result code
     */
    int cuInit(int flags);

    /**
     * {@code cuDriverGetVersion}: the CUDA version the driver supports, {@code 1000 * major + 10 *
     * minor} (e.g. 12040 for 12.4).
     *
     * @param version receives it
     * @return the result code
     */
    int cuDriverGetVersion(IntByReference version);

    /**
     * {@code cuDeviceGetCount}.
     *
     * @param count receives the number of devices
     * @return the result code
     */
    int cuDeviceGetCount(IntByReference count);

    /**
     * {@code cuDeviceGet}.
     *
     * @param device receives the device handle
     * @param ordinal the device's index
     * @return the result code
     */
    int cuDeviceGet(IntByReference device, int ordinal);

    /**
     * {@code cuDevicePrimaryCtxRetain}: the device's primary context, the runtime's.
     *
     * @param ctx receives the context
     * @param device the device handle
     * @return the result code
     */
    int cuDevicePrimaryCtxRetain(PointerByReference ctx, int device);

    /**
     * {@code cuDevicePrimaryCtxRelease_v2}.
     *
     * @param device the device handle
     * @return the result code
     */
    int cuDevicePrimaryCtxRelease_v2(int device);

    /**
     * {@code cuCtxSetCurrent}: needed on each thread that calls CUDA or NCCL.
     *
     * @param ctx the context
     * @return the result code
     */
    int cuCtxSetCurrent(Pointer ctx);

    /**
     * {@code cuStreamCreate}.
     *
     * @param stream receives the stream
     * @param flags {@link #STREAM_NON_BLOCKING} or 0
     * @return the result code
     */
    int cuStreamCreate(PointerByReference stream, int flags);

    /**
     * {@code cuStreamDestroy_v2}.
     *
     * @param stream the stream
     * @return the result code
     */
    int cuStreamDestroy_v2(Pointer stream);

    /**
     * {@code cuStreamSynchronize}: blocks until the stream's work is done (tests only).
     *
     * @param stream the stream
     * @return the result code
     */
    int cuStreamSynchronize(Pointer stream);

    /**
     * {@code cuEventCreate}.
     *
     * @param event receives the event
     * @param flags {@link #EVENT_DISABLE_TIMING} or 0
     * @return the result code
     */
    int cuEventCreate(PointerByReference event, int flags);

    /**
     * {@code cuEventRecord}.
     *
     * @param event the event
     * @param stream the stream whose work so far it marks
     * @return the result code
     */
    int cuEventRecord(Pointer event, Pointer stream);

    /**
     * {@code cuStreamWaitEvent}: the stream's later work waits for the event (on the GPU).
     *
     * @param stream the stream
     * @param event the event
     * @param flags 0
     * @return the result code
     */
    int cuStreamWaitEvent(Pointer stream, Pointer event, int flags);

    /**
     * {@code cuEventQuery}: {@code CUDA_SUCCESS} once the marked work is done, {@code
     * CUDA_ERROR_NOT_READY} before.
     *
     * @param event the event
     * @return the result code
     */
    int cuEventQuery(Pointer event);

    /**
     * {@code cuEventDestroy_v2}.
     *
     * @param event the event
     * @return the result code
     */
    int cuEventDestroy_v2(Pointer event);

    /**
     * {@code cuGetErrorString}.
     *
     * @param error a result code
     * @param text receives a static string
     * @return the result code of the query
     */
    int cuGetErrorString(int error, PointerByReference text);

    /**
     * {@code cuGetErrorName}: e.g. {@code CUDA_ERROR_NO_DEVICE}.
     *
     * @param error a result code
     * @param text receives a static string
     * @return the result code of the query
     */
    int cuGetErrorName(int error, PointerByReference text);

    /**
     * {@code cuMemAlloc_v2} (tests on raw buffers).
     *
     * @param dptr receives the device address
     * @param bytesize bytes
     * @return the result code
     */
    int cuMemAlloc_v2(LongByReference dptr, long bytesize);

    /**
     * {@code cuMemFree_v2}.
     *
     * @param dptr the device address
     * @return the result code
     */
    int cuMemFree_v2(long dptr);

    /**
     * {@code cuMemcpyHtoD_v2}: synchronous.
     *
     * @param dst the device address
     * @param src host memory
     * @param bytes bytes
     * @return the result code
     */
    int cuMemcpyHtoD_v2(long dst, Pointer src, long bytes);

    /**
     * {@code cuMemcpyDtoH_v2}: synchronous.
     *
     * @param dst host memory
     * @param src the device address
     * @param bytes bytes
     * @return the result code
     */
    int cuMemcpyDtoH_v2(Pointer dst, long src, long bytes);

    /**
     * {@code cuMemcpyDtoDAsync_v2}: ordered on the stream.
     *
     * @param dst the destination device address
     * @param src the source device address
     * @param bytes bytes
     * @param stream the stream
     * @return the result code
     */
    int cuMemcpyDtoDAsync_v2(long dst, long src, long bytes, Pointer stream);

    /**
     * {@code cuMemsetD32Async}: sets 32-bit words, ordered on the stream.
     *
     * @param dst the device address
     * @param value the word
     * @param count words
     * @param stream the stream
     * @return the result code
     */
    int cuMemsetD32Async(long dst, int value, long count, Pointer stream);

    /**
     * {@code cuCtxSynchronize}: blocks until the current context's work is done.
     *
     * @return the result code
     */
    int cuCtxSynchronize();
}
