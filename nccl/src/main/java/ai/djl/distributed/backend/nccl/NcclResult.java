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

/** {@code ncclResult_t}: what every NCCL call returns, with NCCL's names for the messages. */
public enum NcclResult {
    /** {@code ncclSuccess}. */
    SUCCESS(0),
    /** {@code ncclUnhandledCudaError}: a CUDA call failed. */
    UNHANDLED_CUDA_ERROR(1),
    /** {@code ncclSystemError}: a system call failed (socket, memory). */
    SYSTEM_ERROR(2),
    /** {@code ncclInternalError}: a bug in NCCL, or memory corruption. */
    INTERNAL_ERROR(3),
    /** {@code ncclInvalidArgument}: a bad argument (null buffer, bad root). */
    INVALID_ARGUMENT(4),
    /** {@code ncclInvalidUsage}: a bad use of the API (two ranks on one GPU). */
    INVALID_USAGE(5),
    /** {@code ncclRemoteError}: a peer failed or the network did. */
    REMOTE_ERROR(6),
    /** {@code ncclInProgress}: a non-blocking call has not finished yet. */
    IN_PROGRESS(7);

    private final int code;

    NcclResult(int code) {
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
     * Returns NCCL's name of the value, e.g. {@code ncclInvalidUsage}.
     *
     * @return the name
     */
    public String nativeName() {
        return NativeNames.nccl(this);
    }

    /**
     * Returns the result of a code.
     *
     * @param code a C value
     * @return the result
     * @throws IllegalArgumentException for a code NCCL does not return
     */
    public static NcclResult of(int code) {
        NcclResult r = NativeNames.byCode(values(), code, NcclResult::code);
        if (r == null) {
            throw new IllegalArgumentException(
                    "ncclResult_t: " + code + " (expected: 0 to " + (values().length - 1) + ")");
        }
        return r;
    }
}
