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
package ai.djl.distributed.transformer.data;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.dataset.Batch;
import ai.djl.training.dataset.Record;

import org.junit.jupiter.api.Test;

class DatasetTest {

    private static final int[] TOKENS = {10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20};

    @Test
    void windowsAndTheirNextTokens() throws Exception {
        TokenWindowDataset ds =
                TokenWindowDataset.builder()
                        .setTokens(TOKENS)
                        .setContextLength(4)
                        .setSampling(2, false)
                        .build();
        // 11 tokens, windows of 4 + 1 label token at stride 4: starts 0 and 4 (8 would need 13)
        assertEquals(2, ds.size());
        try (NDManager m = NDManager.newBaseManager()) {
            Record r = ds.get(m, 1);
            assertEquals(DataType.INT64, r.getData().head().getDataType());
            assertArrayEquals(new long[] {14, 15, 16, 17}, r.getData().head().toLongArray());
            assertArrayEquals(new long[] {15, 16, 17, 18}, r.getLabels().head().toLongArray());
            assertThrows(IndexOutOfBoundsException.class, () -> ds.get(m, 2));
            int batches = 0;
            for (Batch b : ds.getData(m)) {
                try (b) {
                    assertEquals(new Shape(2, 4), b.getData().head().getShape());
                    assertArrayEquals(
                            new long[] {11, 12, 13, 14, 15, 16, 17, 18},
                            b.getLabels().head().toLongArray());
                    batches++;
                }
            }
            assertEquals(1, batches);
        }
    }

    @Test
    void strideSetsTheOverlap() {
        TokenWindowDataset ds =
                TokenWindowDataset.builder()
                        .setTokens(TOKENS)
                        .setContextLength(4)
                        .optStride(1)
                        .setSampling(1, false)
                        .build();
        assertEquals(7, ds.size()); // starts 0..6
        try (NDManager m = NDManager.newBaseManager()) {
            assertArrayEquals(
                    new long[] {17, 18, 19, 20}, ds.get(m, 6).getLabels().head().toLongArray());
        }
    }

    @Test
    void unigramBaselineByHand() {
        // reference counts over vocab 3: t0=2, t1=1, t2=0; smoothed p = (c+1)/(3+3) = 1/2, 1/3, 1/6
        int[] reference = {0, 0, 1};
        int[] evaluated = {0, 2};
        double expected = -(Math.log(0.5) + Math.log(1.0 / 6)) / 2;
        assertEquals(expected, UnigramBaseline.crossEntropy(reference, evaluated, 3), 1e-12);
    }
}
