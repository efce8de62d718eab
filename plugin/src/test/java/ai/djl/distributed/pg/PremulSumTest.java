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
package ai.djl.distributed.pg;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

/**
 * PREMUL_SUM multiplies each rank's input by that rank's own factor before summing, as NCCL's
 * {@code ncclRedOpCreatePreMulSum} ("pre-multiplies input values by a given scalar locally"): with
 * factors that differ per rank, every rank gets the same weighted sum.
 */
@Timeout(120)
class PremulSumTest {

    private static final Duration T = Duration.ofSeconds(30);

    @Test
    void eachRankScalesItsOwnInput() throws Exception {
        for (DebugLevel debug : new DebugLevel[] {DebugLevel.OFF, DebugLevel.DETAIL}) {
            MultiRank.run(
                    2,
                    b -> b.optDebugLevel(debug),
                    T,
                    (g, m) -> {
                        int r = g.getRank();
                        // Rank 0 weighs its input by 1, rank 1 by 3: inputs (r + 1) * [1 2].
                        ReduceOp op = ReduceOp.premulSum(r == 0 ? 1 : 3);
                        // 1 * [1 2] + 3 * [2 4] = [7 14]
                        float[] want = {7, 14};

                        NDArray a = m.create(new float[] {r + 1, 2 * (r + 1)});
                        g.allReduce(a, op);
                        assertArrayEquals(want, a.toFloatArray(), "allReduce on " + r);

                        // Both roots: each rank's factor differs from 1 on one of them as a
                        // non-root, whose array must stay unchanged.
                        float[] mine = {r + 1, 2 * (r + 1)};
                        for (int root = 0; root < 2; root++) {
                            NDArray b = m.create(new float[] {r + 1, 2 * (r + 1)});
                            g.reduce(b, root, op);
                            assertArrayEquals(
                                    r == root ? want : mine,
                                    b.toFloatArray(),
                                    "reduce to " + root + " on " + r);
                        }

                        // A column: a copy, written back.
                        NDArray w =
                                m.create(new float[] {r + 1, 0, 2 * (r + 1), 0}, new Shape(2, 2));
                        g.allReduceCoalesced(
                                List.of(w.get(":, 0"), m.create(new float[] {r + 1})), op);
                        assertArrayEquals(new float[] {7, 0, 14, 0}, w.toFloatArray(), "coalesced");

                        NDArray out = m.zeros(new Shape(1));
                        g.reduceScatterTensor(out, m.create(new float[] {r + 1, 2 * (r + 1)}), op);
                        assertArrayEquals(
                                new float[] {want[r]}, out.toFloatArray(), "reduceScatter");
                        return null;
                    });
        }
    }
}
