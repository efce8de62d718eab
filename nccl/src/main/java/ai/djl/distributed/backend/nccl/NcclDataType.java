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

/** {@code ncclDataType_t}: NCCL's element types, with their C values and NCCL's names. */
public enum NcclDataType {
    /** {@code ncclInt8}. */
    INT8(0, 1),
    /** {@code ncclUint8} (also PyTorch's booleans). */
    UINT8(1, 1),
    /** {@code ncclInt32}. */
    INT32(2, 4),
    /** {@code ncclUint32}. */
    UINT32(3, 4),
    /** {@code ncclInt64}. */
    INT64(4, 8),
    /** {@code ncclUint64}. */
    UINT64(5, 8),
    /** {@code ncclFloat16}. */
    FLOAT16(6, 2),
    /** {@code ncclFloat32}. */
    FLOAT32(7, 4),
    /** {@code ncclFloat64}. */
    FLOAT64(8, 8),
    /** {@code ncclBfloat16} (2.10+). */
    BFLOAT16(9, 2);

    private final int code;
    private final int width;

    NcclDataType(int code, int width) {
        this.code = code;
        this.width = width;
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
     * Returns NCCL's name, e.g. {@code ncclBfloat16}.
     *
     * @return the name
     */
    public String nativeName() {
        return NativeNames.nccl(this);
    }

    /**
     * Returns the size of one element in bytes.
     *
     * @return the width
     */
    public int width() {
        return width;
    }
}
