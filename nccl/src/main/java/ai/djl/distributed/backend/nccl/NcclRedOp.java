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
 * {@code ncclRedOp_t}: NCCL's built-in reductions with their C values and NCCL's names. A PreMulSum
 * is not among them: it is created per communicator ({@code ncclRedOpCreatePreMulSum}).
 */
public enum NcclRedOp {
    /** {@code ncclSum}. */
    SUM(0),
    /** {@code ncclProd}. */
    PROD(1),
    /** {@code ncclMax}. */
    MAX(2),
    /** {@code ncclMin}. */
    MIN(3),
    /** {@code ncclAvg} (2.10+). */
    AVG(4);

    private final int code;

    NcclRedOp(int code) {
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
     * Returns NCCL's name, e.g. {@code ncclSum}.
     *
     * @return the name
     */
    public String nativeName() {
        return NativeNames.nccl(this);
    }
}
