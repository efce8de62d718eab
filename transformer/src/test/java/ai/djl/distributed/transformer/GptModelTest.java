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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.distributed.staged.Stage;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.training.ParameterStore;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Test;

import java.util.List;

class GptModelTest {

    @Test
    void logitsHaveShapeBatchTimeVocab() {
        GptConfig config = TestModels.small();
        try (Model model = TestModels.newModel(config, 1, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            for (int t : new int[] {1, 5, config.getContextLength()}) {
                NDArray logits = forward(model, TestModels.randomTokens(m, 3, t, 13, t));
                assertEquals(new Shape(3, t, config.getVocabSize()), logits.getShape());
                assertEquals(DataType.FLOAT32, logits.getDataType());
            }
        }
    }

    @Test
    void theStagesRunInOrderGiveTheForwardPass() {
        GptConfig config = TestModels.small();
        try (Model model = TestModels.newModel(config, 3, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            GptModel gpt = (GptModel) model.getBlock();
            NDArray tokens = TestModels.randomTokens(m, 2, 6, 13, 4);
            NDArray whole = forward(model, tokens);
            List<Stage> stages = gpt.getStages();
            assertEquals(config.getLayers() + 2, stages.size());
            ParameterStore ps = new ParameterStore(m, false);
            NDList h = new NDList(tokens);
            for (Stage s : stages) {
                h = s.forward(ps, h, false);
            }
            assertArrayEquals(whole.toFloatArray(), h.singletonOrThrow().toFloatArray());
            // The tied token embedding belongs to the first and the last stage, and every
            // parameter to some stage.
            Parameter embedding = stages.get(0).getParameters().get(0);
            assertEquals("tokenEmbedding", embedding.getName());
            assertTrue(stages.get(stages.size() - 1).getParameters().contains(embedding));
            for (Pair<String, Parameter> p : gpt.getParameters()) {
                assertTrue(
                        stages.stream().anyMatch(s -> s.getParameters().contains(p.getValue())),
                        p.getKey());
            }
        }
    }

    @Test
    void rejectsSequencesLongerThanTheContext() {
        GptConfig config = TestModels.small();
        try (Model model = TestModels.newModel(config, 1, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            NDArray tooLong = TestModels.randomTokens(m, 1, config.getContextLength() + 1, 13, 0);
            IllegalArgumentException e =
                    assertThrows(IllegalArgumentException.class, () -> forward(model, tooLong));
            assertEquals(
                    "tokens: 9 after 0 cached (expected: 1 to 8, the context length being 8)",
                    e.getMessage());
        }
    }

    @Test
    void parameterCountMatchesTheConfiguration() {
        GptConfig config = TestModels.small();
        try (Model model = TestModels.newModel(config, 1, DataType.FLOAT32)) {
            long n = 0;
            for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
                n += p.getValue().getArray().size();
            }
            // counted by hand for d=16, hidden=64, V=13, C=8, 2 layers:
            // per layer 4*16 (two LayerNorms) + 16*48+48 + 16*16+16 + 16*64+64 + 64*16+16 = 3280
            assertEquals(13 * 16 + 8 * 16 + 2 * 3280 + 2 * 16, n);
            assertEquals(n, config.paramCount());
        }
    }

    @Test
    void positionDependsOnlyOnEarlierTokens() {
        GptConfig config = TestModels.small();
        int time = config.getContextLength();
        try (Model model = TestModels.newModel(config, 2, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            long[] a = TestModels.randomTokens(m, 1, time, 13, 7).toLongArray();
            for (int t = 0; t < time - 1; t++) {
                long[] b = a.clone();
                for (int j = t + 1; j < time; j++) {
                    b[j] = (a[j] + 1 + j) % 13; // every later token changes
                }
                float[][] la = rows(forward(model, m.create(a, new Shape(1, time))));
                float[][] lb = rows(forward(model, m.create(b, new Shape(1, time))));
                for (int i = 0; i <= t; i++) {
                    assertArrayEquals(la[i], lb[i], 1e-6f, "position " + i + ", change after " + t);
                }
                // and the change is visible right after t: the test can see a difference
                assertFalse(java.util.Arrays.equals(la[t + 1], lb[t + 1]));
            }
        }
    }

    static NDArray forward(Model model, NDArray tokens) {
        ParameterStore ps = new ParameterStore(tokens.getManager(), false);
        return model.getBlock().forward(ps, new NDList(tokens), false).singletonOrThrow();
    }

    static float[][] rows(NDArray logits) {
        int t = (int) logits.getShape().get(1);
        int v = (int) logits.getShape().get(2);
        float[] flat = logits.toFloatArray();
        float[][] out = new float[t][v];
        for (int i = 0; i < t; i++) {
            System.arraycopy(flat, i * v, out[i], 0, v);
        }
        return out;
    }
}
