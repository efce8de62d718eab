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

import ai.djl.Model;
import ai.djl.engine.Engine;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.util.Random;

/** Helpers shared by the transformer tests: seeded models and token batches. */
final class TestModels {

    private TestModels() {}

    /** A tiny shape for tests: 2 layers, 2 heads, width 16, context 8, vocabulary 13. */
    static GptConfig small() {
        return GptConfig.builder()
                .setVocabSize(13)
                .setContextLength(8)
                .setLayers(2)
                .setHeads(2)
                .setWidth(16)
                .build();
    }

    /** A model holding an initialised GptModel, with the engine's seed set first. */
    static Model newModel(GptConfig config, long seed, DataType dataType) {
        Engine.getInstance().setRandomSeed((int) seed);
        Model model = Model.newInstance("gpt-test");
        GptModel block = new GptModel(config);
        model.setBlock(block);
        block.initialize(model.getNDManager(), dataType, new Shape(1, config.getContextLength()));
        return model;
    }

    /** Random token ids, uniform over the vocabulary, INT64 (batch, time). */
    static NDArray randomTokens(NDManager manager, int batch, int time, int vocab, long seed) {
        Random r = new Random(seed);
        long[] ids = new long[batch * time];
        for (int i = 0; i < ids.length; i++) {
            ids[i] = r.nextInt(vocab);
        }
        return manager.create(ids, new Shape(batch, time));
    }
}
