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
package ai.djl.distributed.transformer;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.util.Arrays;

/** Small operations shared by the blocks. */
final class Ops {

    private Ops() {}

    /**
     * Applies dropout in training when the rate is positive; otherwise returns the input.
     *
     * @param x the input
     * @param rate the dropout rate
     * @param training whether the model is training
     * @return the input, or a new array with dropout applied
     */
    static NDArray dropout(NDArray x, float rate, boolean training) {
        if (!training || rate == 0) {
            return x;
        }
        return x.getNDArrayInternal().dropout(x, rate, true).singletonOrThrow();
    }

    /**
     * Creates the additive causal mask for {@code n} new queries that follow {@code offset} cached
     * positions: entry {@code (i, j)} is 0 where key {@code j} may be seen by query {@code i} (that
     * is {@code j <= offset + i}) and negative infinity elsewhere. Adding it to the attention
     * scores before the softmax is PyTorch's {@code masked_fill(mask, -inf)}.
     *
     * @param manager the manager of the new array
     * @param n the number of queries
     * @param offset the number of positions before the first query
     * @param dataType the data type of the scores
     * @return the mask, {@code (n, offset + n)}
     */
    static NDArray causalMask(NDManager manager, int n, int offset, DataType dataType) {
        int keys = offset + n;
        float[] mask = new float[n * keys];
        for (int i = 0; i < n; i++) {
            Arrays.fill(mask, i * keys + offset + i + 1, (i + 1) * keys, Float.NEGATIVE_INFINITY);
        }
        NDArray m = manager.create(mask, new Shape(n, keys));
        if (dataType == DataType.FLOAT32) {
            return m;
        }
        NDArray cast = m.toType(dataType, false);
        m.close();
        return cast;
    }
}
