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
package ai.djl.distributed.ddp;

import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;

/**
 * The built-in {@link CommHook}s, as {@code torch.distributed.algorithms.ddp_comm_hooks}.
 *
 * <p>There is no bfloat16 compression: DJL 0.35.1's PyTorch engine cannot create bfloat16 NDArrays
 * from Java (its JNI has no bfloat16 case and aborts the JVM), so a bfloat16 wire format cannot be
 * built on NDArrays. float16 ({@link #fp16Compress()}) halves the bytes the same way.
 */
public final class CommHooks {

    private CommHooks() {}

    /**
     * Returns the default hook: one all-reduce of the bucket with {@link ReduceOp#AVG}, in place,
     * as PyTorch's {@code allreduce_hook}.
     *
     * @return the hook
     */
    public static CommHook allReduce() {
        return (group, bucket) -> {
            NDArray buffer = bucket.getBuffer();
            return group.allReduceAsync(buffer, ReduceOp.AVG).getFuture().thenApply(v -> buffer);
        };
    }

    /**
     * Returns a hook that sends float16 on the wire, as PyTorch's {@code fp16_compress_hook}: each
     * rank divides its gradients by the world size and casts them to float16, the float16 buffers
     * are summed, and the sum is cast back. Halves the bytes sent for float32 gradients, at
     * float16's precision (about 3 decimal digits; gradients under about 6e-8 after division become
     * 0).
     *
     * @return the hook
     */
    public static CommHook fp16Compress() {
        return (group, bucket) -> {
            NDArray buffer = bucket.getBuffer();
            NDManager m = bucket.getManager();
            // Divide before the sum, as PyTorch does, so that the float16 sum does not overflow.
            NDArray scaled = buffer.div(group.getSize());
            scaled.attach(m);
            NDArray half = scaled.toType(DataType.FLOAT16, false);
            half.attach(m);
            DataType type = buffer.getDataType();
            return group.allReduceAsync(half, ReduceOp.SUM)
                    .getFuture()
                    .thenApply(
                            v -> {
                                NDArray back = half.toType(type, false);
                                back.attach(m);
                                return back;
                            });
        };
    }
}
