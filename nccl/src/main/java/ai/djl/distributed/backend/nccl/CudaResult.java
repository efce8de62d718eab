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

/**
 * The {@code CUresult} values the backend tells apart, with the driver's names; any other is named
 * by {@code cuGetErrorName} where the driver is loaded.
 */
public enum CudaResult {
    /** {@code CUDA_SUCCESS}. */
    SUCCESS(0),
    /** {@code CUDA_ERROR_INVALID_VALUE}. */
    INVALID_VALUE(1),
    /** {@code CUDA_ERROR_OUT_OF_MEMORY}. */
    OUT_OF_MEMORY(2),
    /** {@code CUDA_ERROR_NOT_INITIALIZED}: {@code cuInit} was not called. */
    NOT_INITIALIZED(3),
    /** {@code CUDA_ERROR_DEINITIALIZED}: the driver is shutting down. */
    DEINITIALIZED(4),
    /** {@code CUDA_ERROR_INSUFFICIENT_DRIVER}: the driver is older than the runtime. */
    INSUFFICIENT_DRIVER(35),
    /** {@code CUDA_ERROR_NO_DEVICE}: no GPU is visible. */
    NO_DEVICE(100),
    /** {@code CUDA_ERROR_INVALID_DEVICE}: a bad device index. */
    INVALID_DEVICE(101),
    /** {@code CUDA_ERROR_INVALID_CONTEXT}: no current context on this thread. */
    INVALID_CONTEXT(201),
    /** {@code CUDA_ERROR_INVALID_HANDLE}: a destroyed stream or event. */
    INVALID_HANDLE(400),
    /** {@code CUDA_ERROR_NOT_READY}: an event's work is not done yet. */
    NOT_READY(600),
    /** {@code CUDA_ERROR_ILLEGAL_ADDRESS}: a kernel read or wrote outside its memory. */
    ILLEGAL_ADDRESS(700);

    private final int code;

    CudaResult(int code) {
        this.code = code;
    }

    /**
     * Returns the C value.
     *
     * @return the code
     */
    public int code() {
        return code;
    }

    /**
     * Returns the driver's name of the value.
     *
     * @return the name
     */
    public String nativeName() {
        return NativeNames.cuda(this);
    }

    /**
     * Names a code: the driver's name where this enum knows it, else {@code CUresult N} for code N.
     *
     * @param code a C value
     * @return the name
     */
    public static String nameOf(int code) {
        CudaResult r = NativeNames.byCode(values(), code, CudaResult::code);
        return r == null ? "CUresult " + code : r.nativeName();
    }
}
