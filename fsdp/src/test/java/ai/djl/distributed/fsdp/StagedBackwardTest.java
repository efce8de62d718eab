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
package ai.djl.distributed.fsdp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.distributed.staged.Stage;
import ai.djl.distributed.transformer.GptModel;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Parameter;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.training.GradientCollector;
import ai.djl.training.ParameterStore;
import ai.djl.training.Trainer;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The staged backward pass gives the gradients of an ordinary one (a single backward through the
 * whole graph), with dropout and the tied embedding: without recompute (the same generator seed
 * before both forward passes) and with it (activation checkpointing, whose stages each reseed the
 * generator: the reference reseeds the same way before each stage of one recorded forward pass).
 */
@Timeout(120)
class StagedBackwardTest {

    private static final float DROPOUT = 0.2f;

    @ParameterizedTest
    @CsvSource({"FULL_SHARD,true", "FULL_SHARD,false", "SHARD_GRAD_OP,false", "SHARD_GRAD_OP,true"})
    void stagedGradientsEqualAnOrdinaryBackward(ShardingStrategy strategy, boolean checkpointing)
            throws Exception {
        long seed = 17;
        // FSDP on one rank: its shards are whole units, their gradients the full gradients.
        Object[] staged =
                Fixture.ranks(
                                1,
                                (group, manager) -> {
                                    try (Model model = Fixture.gptModel(DROPOUT);
                                            FullyShardedDataParallel t =
                                                    Fixture.fsdp(
                                                            model,
                                                            group,
                                                            FullyShardedDataParallel.builder()
                                                                    .optStrategy(strategy)
                                                                    .optActivationCheckpointing(
                                                                            checkpointing))) {
                                        NDList[] batch = Fixture.tokens(manager, 0, 0, 3);
                                        JniUtils.setSeed(seed);
                                        Fixture.backward(t, batch);
                                        Map<String, float[]> grads = new LinkedHashMap<>();
                                        for (FlatUnit u : t.units()) {
                                            float[] g = u.gradient().toFloatArray();
                                            for (int i = 0; i < u.parameterCount(); i++) {
                                                int from = (int) u.offset(i);
                                                float[] part = new float[(int) u.shape(i).size()];
                                                System.arraycopy(g, from, part, 0, part.length);
                                                grads.put(u.spec().names().get(i), part);
                                            }
                                        }
                                        return new Object[] {grads, t.staged().lastPassSeed()};
                                    }
                                })
                        .get(0);
        @SuppressWarnings("unchecked")
        Map<String, float[]> actual = (Map<String, float[]>) staged[0];
        long passSeed = (Long) staged[1];

        try (Model model = Fixture.gptModel(DROPOUT);
                Trainer t = model.newTrainer(Fixture.config(Fixture.adamW()));
                NDManager m = NDManager.newBaseManager()) {
            NDList[] batch = Fixture.tokens(m, 0, 0, 3);
            GptModel gpt = (GptModel) model.getBlock();
            try (GradientCollector c = t.newGradientCollector()) {
                NDList out;
                if (!checkpointing) {
                    JniUtils.setSeed(seed);
                    out = t.forward(batch[0]);
                } else {
                    ParameterStore ps = new ParameterStore(m, false);
                    List<Stage> stages = gpt.getStages();
                    out = batch[0];
                    for (int k = 0; k < stages.size(); k++) {
                        JniUtils.setSeed(passSeed + k);
                        out = stages.get(k).forward(ps, out, true);
                    }
                }
                NDArray loss = t.getLoss().evaluate(batch[1], out);
                c.backward(loss);
            }
            List<String> names = new ArrayList<>();
            for (Pair<String, Parameter> p : gpt.getParameters()) {
                names.add(p.getKey());
                float[] expected = p.getValue().getArray().getGradient().toFloatArray();
                assertArrayEquals(expected, actual.get(p.getKey()), p.getKey());
            }
            assertEquals(names.size(), actual.size());
        }
        // Dropout was on: without it the gradients differ.
        try (Model model = Fixture.gptModel(0);
                Trainer t = model.newTrainer(Fixture.config(Fixture.adamW()));
                NDManager m = NDManager.newBaseManager()) {
            Fixture.backward(t, Fixture.tokens(m, 0, 0, 3));
            float[] plain =
                    model.getBlock()
                            .getParameters()
                            .get("tokenEmbedding")
                            .getArray()
                            .getGradient()
                            .toFloatArray();
            assertTrue(Fixture.relativeError(actual.get("tokenEmbedding"), plain) > 1e-3);
        }
    }
}
