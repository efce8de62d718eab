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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.MalformedModelException;
import ai.djl.Model;
import ai.djl.distributed.transformer.data.BpeTokenizer;
import ai.djl.distributed.transformer.data.ByteTokenizer;
import ai.djl.distributed.transformer.data.Tokenizer;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

class GptCheckpointTest {

    @Test
    void roundTripGivesIdenticalOutputs(@TempDir Path dir) throws Exception {
        // merges ab, cd and (ab)(ab); then no pair occurs twice
        Tokenizer tokenizer = BpeTokenizer.train(List.of("abab abab cdcd"), 300);
        assertEquals(259, tokenizer.vocabSize());
        GptConfig config = GptConfig.preset("tiny").setVocabSize(259).build();
        try (Model model = TestModels.newModel(config, 9, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            NDArray tokens = TestModels.randomTokens(m, 2, 32, 259, 4);
            float[] before = GptModelTest.forward(model, tokens).toFloatArray();
            GptCheckpoint.save(dir, model, tokenizer);
            assertTrue(Files.exists(dir.resolve("gpt-0000.params")));

            try (GptCheckpoint loaded = GptCheckpoint.load(dir)) {
                assertEquals(config, loaded.getBlock().getConfig());
                float[] after = GptModelTest.forward(loaded.getModel(), tokens).toFloatArray();
                assertArrayEquals(before, after, 0f);
                String text = "abab cdcd, ababab!";
                assertArrayEquals(tokenizer.encode(text), loaded.getTokenizer().encode(text));
            }
        }
    }

    @Test
    void refusesATokenizerOfAnotherVocabulary(@TempDir Path dir) {
        GptConfig config = GptConfig.preset("tiny").setVocabSize(300).build();
        try (Model model = TestModels.newModel(config, 9, DataType.FLOAT32)) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> GptCheckpoint.save(dir, model, new ByteTokenizer()));
            assertEquals("tokenizer vocabSize: 256 (expected: the model's 300)", e.getMessage());
        }
    }

    @Test
    void refusesParametersThatDoNotFitTheConfiguration(@TempDir Path dir) throws Exception {
        GptConfig config = GptConfig.preset("tiny").setVocabSize(256).build();
        try (Model model = TestModels.newModel(config, 9, DataType.FLOAT32)) {
            GptCheckpoint.save(dir, model, new ByteTokenizer());
        }
        Path file = dir.resolve(GptCheckpoint.CONFIG_FILE);
        String saved = Files.readString(file);
        // the parameters are of context 32 and width 32: positions 32 to 63 have no embedding
        Files.writeString(file, saved.replace("contextLength=32", "contextLength=64"));
        MalformedModelException e =
                assertThrows(MalformedModelException.class, () -> GptCheckpoint.load(dir));
        assertTrue(
                e.getMessage().contains("positionEmbedding has shape (32, 32) (expected: (64, 32)"),
                e.getMessage());
        // width 16 with 2 heads: the first mismatch is the token embedding
        Files.writeString(file, saved.replace("width=32", "width=16"));
        e = assertThrows(MalformedModelException.class, () -> GptCheckpoint.load(dir));
        assertTrue(
                e.getMessage().contains("tokenEmbedding has shape (256, 32) (expected: (256, 16)"),
                e.getMessage());
        // a vocabulary that the tokenizer (256 bytes) and the parameters do not have
        Files.writeString(file, saved.replace("vocabSize=256", "vocabSize=300"));
        e = assertThrows(MalformedModelException.class, () -> GptCheckpoint.load(dir));
        assertTrue(e.getMessage().contains("vocabSize 256 (expected: the configuration's 300)"));
        // the configuration as saved still loads
        Files.writeString(file, saved);
        try (GptCheckpoint loaded = GptCheckpoint.load(dir)) {
            assertEquals(config, loaded.getBlock().getConfig());
        }
    }

    @Test
    void refusesAParameterFileWithOneParameterOfAnotherShape(@TempDir Path dir) throws Exception {
        GptConfig config = GptConfig.preset("tiny").setVocabSize(256).build();
        // the second block's MLP expansion, (out, in) = (4 * 32, 32) as torch.nn.Linear's; DJL
        // numbers each child block in the name
        String name = "02block1_04mlp_01fc_weight";
        Shape built = new Shape(128, 32);
        Shape transposed = new Shape(32, 128);
        Path good = dir.resolve("good");
        Path bad = dir.resolve("bad");
        try (Model model = TestModels.newModel(config, 9, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            NDArray tokens = TestModels.randomTokens(m, 2, 32, 256, 4);
            float[] before = GptModelTest.forward(model, tokens).toFloatArray();
            GptCheckpoint.save(good, model, new ByteTokenizer());
            Parameter fc = model.getBlock().getParameters().get(name);
            assertEquals(built, fc.getArray().getShape(), "the model as built");
            replaceArray(model, fc, m.zeros(transposed));
            GptCheckpoint.save(bad, model, new ByteTokenizer());

            MalformedModelException e =
                    assertThrows(MalformedModelException.class, () -> GptCheckpoint.load(bad));
            assertTrue(
                    e.getMessage()
                            .startsWith(
                                    bad
                                            + ": parameter "
                                            + name
                                            + " has shape (32, 128) (expected: (128, 32) for "),
                    e.getMessage());
            // the same model saved before the change loads, and computes what it did
            try (GptCheckpoint loaded = GptCheckpoint.load(good)) {
                float[] after = GptModelTest.forward(loaded.getModel(), tokens).toFloatArray();
                assertArrayEquals(before, after, 0f);
            }
        }
    }

    @Test
    void theExpectedShapesAreThoseOfAnInitializedModel() {
        GptConfig config = GptConfig.preset("tiny").setVocabSize(259).setLayers(3).build();
        Map<String, Shape> expected = GptCheckpoint.expectedShapes(config);
        try (Model model = TestModels.newModel(config, 9, DataType.FLOAT32)) {
            Map<String, Shape> initialized = new LinkedHashMap<>();
            for (Pair<String, Parameter> p : model.getBlock().getParameters()) {
                initialized.put(p.getKey(), p.getValue().getArray().getShape());
            }
            assertEquals(initialized, expected);
            assertEquals(List.copyOf(initialized.keySet()), List.copyOf(expected.keySet()));
        }
        // a few by hand: embeddings (vocabulary, width) and (context, width); qkv (3 width, width)
        assertEquals(new Shape(259, 32), expected.get("tokenEmbedding"));
        assertEquals(new Shape(32, 32), expected.get("positionEmbedding"));
        assertEquals(new Shape(96, 32), expected.get("03block2_02attn_01qkv_weight"));
        assertEquals(new Shape(32), expected.get("04lnFinal_beta"));
        assertEquals(2 + 3 * 12 + 2, expected.size());
    }

    /**
     * Puts an array of another shape into an initialized parameter. {@link Parameter#setArray}
     * refuses a parameter that has a shape; DJL's own parameter record ({@link Parameter#save},
     * then {@link Parameter#load}) is how a checkpoint's array gets in, so it goes in that way.
     */
    private static void replaceArray(Model model, Parameter p, NDArray array)
            throws IOException, MalformedModelException {
        Parameter carrier =
                Parameter.builder()
                        .setName(p.getName())
                        .setType(p.getType())
                        .optArray(array)
                        .build();
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        carrier.save(new DataOutputStream(bytes));
        p.close();
        p.load(
                model.getNDManager(),
                new DataInputStream(new ByteArrayInputStream(bytes.toByteArray())));
    }

    @Test
    void aLaterSaveReplacesTheParametersOfAnEarlierOne(@TempDir Path dir) throws Exception {
        GptConfig config = GptConfig.preset("tiny").setVocabSize(256).build();
        try (Model first = TestModels.newModel(config, 1, DataType.FLOAT32);
                Model second = TestModels.newModel(config, 2, DataType.FLOAT32);
                NDManager m = NDManager.newBaseManager()) {
            NDArray tokens = TestModels.randomTokens(m, 1, 32, 256, 4);
            float[] expected = GptModelTest.forward(second, tokens).toFloatArray();
            // numbered by DJL's "Epoch" property, as its checkpoint listeners set it
            first.setProperty("Epoch", "3");
            GptCheckpoint.save(dir, first, new ByteTokenizer());
            second.setProperty("Epoch", "1");
            GptCheckpoint.save(dir, second, new ByteTokenizer());
            try (GptCheckpoint loaded = GptCheckpoint.load(dir)) {
                float[] got = GptModelTest.forward(loaded.getModel(), tokens).toFloatArray();
                assertArrayEquals(expected, got, 0f, "the second model's outputs");
            }
            try (Stream<Path> files = Files.list(dir)) {
                assertEquals(
                        List.of("gpt-0001.params"),
                        files.map(f -> f.getFileName().toString())
                                .filter(f -> f.endsWith(".params"))
                                .collect(Collectors.toList()));
            }
        }
    }

    @Test
    void aSaveThatFailsLeavesTheEarlierCheckpoint(@TempDir Path dir) throws Exception {
        GptConfig config = GptConfig.preset("tiny").setVocabSize(256).build();
        try (Model first = TestModels.newModel(config, 1, DataType.FLOAT32);
                Model unwritable = Model.newInstance("gpt");
                NDManager m = NDManager.newBaseManager()) {
            NDArray tokens = TestModels.randomTokens(m, 1, 32, 256, 4);
            float[] expected = GptModelTest.forward(first, tokens).toFloatArray();
            GptCheckpoint.save(dir, first, new ByteTokenizer());
            // a model whose parameters were never initialized: DJL cannot write it
            GptConfig other = GptConfig.preset("tiny").setVocabSize(256).setLayers(1).build();
            unwritable.setBlock(new GptModel(other));
            assertThrows(
                    RuntimeException.class,
                    () -> GptCheckpoint.save(dir, unwritable, new ByteTokenizer()));
            try (GptCheckpoint loaded = GptCheckpoint.load(dir)) {
                float[] got = GptModelTest.forward(loaded.getModel(), tokens).toFloatArray();
                assertArrayEquals(expected, got, 0f, "the first model's outputs");
            }
            try (Stream<Path> files = Files.list(dir)) {
                assertEquals(
                        List.of("config.properties", "gpt-0000.params", "tokenizer.txt"),
                        files.map(f -> f.getFileName().toString())
                                .sorted()
                                .collect(Collectors.toList()),
                        "nothing left of the failed save");
            }
        }
    }
}
