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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.ParameterStore;

import org.junit.jupiter.api.Test;

import java.util.Arrays;

class GptGeneratorTest {

    private static final int[] PROMPT = {3, 1, 4};

    @Test
    void sameSeedSameText() {
        GptConfig config = TestModels.small();
        try (Model model = TestModels.newModel(config, 1, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            GptGenerator gen = GptGenerator.builder((GptModel) model.getBlock()).optTopK(5).build();
            int[] a = gen.generate(m, PROMPT, 20, 42);
            int[] b = gen.generate(m, PROMPT, 20, 42);
            int[] c = gen.generate(m, PROMPT, 20, 43);
            assertEquals(23, a.length);
            assertArrayEquals(PROMPT, Arrays.copyOf(a, 3));
            assertArrayEquals(a, b);
            assertFalse(Arrays.equals(a, c), "another seed gives another sample");
        }
    }

    @Test
    void cachedLogitsMatchAFullRecompute() {
        GptConfig config = TestModels.small();
        int time = config.getContextLength();
        try (Model model = TestModels.newModel(config, 2, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            GptModel block = (GptModel) model.getBlock();
            long[] seq = TestModels.randomTokens(m, 2, time, 13, 5).toLongArray();
            float[][][] full = new float[2][][];
            for (int b = 0; b < 2; b++) {
                long[] row = Arrays.copyOfRange(seq, b * time, (b + 1) * time);
                full[b] =
                        GptModelTest.rows(
                                GptModelTest.forward(model, m.create(row, new Shape(1, time))));
            }
            // prefill 3 positions, then one at a time: every position's logits as without cache
            ParameterStore ps = new ParameterStore(m, false);
            try (KvCache cache = new KvCache(m, config)) {
                int t = 0;
                for (int n : new int[] {3, 1, 1, 2, 1}) {
                    long[] chunk = new long[2 * n];
                    for (int b = 0; b < 2; b++) {
                        System.arraycopy(seq, b * time + t, chunk, b * n, n);
                    }
                    NDArray out = block.forwardCached(ps, m.create(chunk, new Shape(2, n)), cache);
                    assertEquals(new Shape(2, n, 13), out.getShape());
                    for (int b = 0; b < 2; b++) {
                        float[][] got = GptModelTest.rows(out.get(b).expandDims(0));
                        for (int i = 0; i < n; i++) {
                            assertArrayEquals(
                                    full[b][t + i], got[i], 1e-5f, "b=" + b + " t=" + (t + i));
                        }
                    }
                    t += n;
                    assertEquals(t, cache.length());
                }
            }
        }
    }

    @Test
    void generationWithCacheEqualsGenerationWithout() {
        GptConfig config = TestModels.small();
        try (Model model = TestModels.newModel(config, 3, DataType.FLOAT64);
                NDManager m = NDManager.newBaseManager()) {
            GptModel block = (GptModel) model.getBlock();
            // 3 context lengths: the window fills, then slides
            int steps = 3 * config.getContextLength();
            for (float temperature : new float[] {0f, 1f}) {
                int[] cached =
                        GptGenerator.builder(block)
                                .optTemperature(temperature)
                                .build()
                                .generate(m, PROMPT, steps, 7);
                int[] recomputed =
                        GptGenerator.builder(block)
                                .optTemperature(temperature)
                                .optUseCache(false)
                                .build()
                                .generate(m, PROMPT, steps, 7);
                assertArrayEquals(recomputed, cached, "temperature " + temperature);
            }
        }
    }
}
