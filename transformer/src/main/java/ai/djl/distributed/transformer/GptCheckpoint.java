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

import ai.djl.Device;
import ai.djl.MalformedModelException;
import ai.djl.Model;
import ai.djl.distributed.transformer.data.Tokenizer;
import ai.djl.distributed.transformer.data.Tokenizers;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;
import ai.djl.util.PairList;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A trained model on disk: one directory holding the parameters ({@code gpt-0000.params}, DJL's
 * format, numbered by the model's {@code Epoch} property when it has one), the configuration
 * ({@code config.properties}) and the tokenizer ({@code tokenizer.txt}), everything needed to
 * rebuild the model and generate text.
 *
 * <p>A loaded checkpoint owns its {@link Model}; {@link #close()} releases it.
 */
public final class GptCheckpoint implements AutoCloseable {

    /** The model name, the prefix of the parameter file. */
    public static final String MODEL_NAME = "gpt";

    /** The configuration's file name. */
    public static final String CONFIG_FILE = "config.properties";

    /** The tokenizer's file name. */
    public static final String TOKENIZER_FILE = "tokenizer.txt";

    /** DJL's parameter file names, {@code gpt-NNNN.params}. */
    private static final String PARAMS_GLOB = MODEL_NAME + "-[0-9][0-9][0-9][0-9].params";

    private final Model model;
    private final GptModel block;
    private final Tokenizer tokenizer;

    private GptCheckpoint(Model model, GptModel block, Tokenizer tokenizer) {
        this.model = model;
        this.block = block;
        this.tokenizer = tokenizer;
    }

    /**
     * Saves a model whose block is a {@link GptModel}, with its tokenizer, into a directory
     * (created if missing; files of an earlier save are replaced, and kept if this save fails
     * before writing every file).
     *
     * @param dir the directory
     * @param model the model
     * @param tokenizer the tokenizer the model was trained with
     * @throws IOException if writing fails
     * @throws IllegalArgumentException if the model's block is not a GptModel or the tokenizer's
     *     vocabulary does not match the model's
     */
    public static void save(Path dir, Model model, Tokenizer tokenizer) throws IOException {
        if (!(model.getBlock() instanceof GptModel)) {
            throw new IllegalArgumentException(
                    "model block: " + model.getBlock() + " (expected: a GptModel)");
        }
        GptConfig config = ((GptModel) model.getBlock()).getConfig();
        if (tokenizer.vocabSize() != config.getVocabSize()) {
            throw new IllegalArgumentException(
                    "tokenizer vocabSize: "
                            + tokenizer.vocabSize()
                            + " (expected: the model's "
                            + config.getVocabSize()
                            + ")");
        }
        Files.createDirectories(dir);
        // Everything is written aside first, so a save that fails (a full disk, a model that
        // cannot be written) leaves the earlier checkpoint as it was; then the files replace the
        // earlier ones, parameters first.
        Path staging = Files.createTempDirectory(dir, ".saving-");
        try {
            config.save(staging.resolve(CONFIG_FILE));
            tokenizer.save(staging.resolve(TOKENIZER_FILE));
            model.save(staging, MODEL_NAME);
            Path params = paramsFiles(staging).get(0);
            Path target = dir.resolve(params.getFileName());
            Files.move(params, target, StandardCopyOption.REPLACE_EXISTING);
            // DJL numbers the file (the model's "Epoch" property) and loads the highest number: an
            // earlier save's file would be kept, and loaded instead whenever its number is higher
            for (Path f : paramsFiles(dir)) {
                if (!f.equals(target)) {
                    Files.delete(f);
                }
            }
            for (String name : List.of(CONFIG_FILE, TOKENIZER_FILE)) {
                Files.move(
                        staging.resolve(name),
                        dir.resolve(name),
                        StandardCopyOption.REPLACE_EXISTING);
            }
        } finally {
            deleteTree(staging);
        }
    }

    /** The parameter files in a directory ({@code gpt-NNNN.params}), none when it has none. */
    private static List<Path> paramsFiles(Path dir) throws IOException {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, PARAMS_GLOB)) {
            files.forEach(found::add);
        }
        return found;
    }

    private static void deleteTree(Path dir) throws IOException {
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                Files.delete(f);
            }
        }
        Files.delete(dir);
    }

    /**
     * Loads a checkpoint written by {@link #save}, on the default engine and device.
     *
     * @param dir the directory
     * @return the checkpoint, owning its model
     * @throws IOException if a file is missing or unreadable
     * @throws MalformedModelException if the parameters or the tokenizer do not fit the
     *     configuration
     */
    public static GptCheckpoint load(Path dir) throws IOException, MalformedModelException {
        GptConfig config = GptConfig.load(dir.resolve(CONFIG_FILE));
        Tokenizer tokenizer = Tokenizers.load(dir.resolve(TOKENIZER_FILE));
        if (tokenizer.vocabSize() != config.getVocabSize()) {
            throw new MalformedModelException(
                    dir.resolve(TOKENIZER_FILE)
                            + ": vocabSize "
                            + tokenizer.vocabSize()
                            + " (expected: the configuration's "
                            + config.getVocabSize()
                            + ")");
        }
        GptModel block = new GptModel(config);
        Model model = Model.newInstance(MODEL_NAME);
        try {
            model.setBlock(block);
            model.load(dir, MODEL_NAME);
            checkShapes(dir, block);
        } catch (IOException | MalformedModelException | RuntimeException e) {
            model.close();
            throw e;
        }
        return new GptCheckpoint(model, block, tokenizer);
    }

    /**
     * Checks every loaded parameter against the shape the model's own blocks give it for the
     * configuration: DJL's loader takes each array's shape from the file, so a parameter file of
     * another shape (a stale or mixed-up file) would otherwise load and fail, or compute something
     * else, only later.
     *
     * <p>No I/O: it reads the block, which {@link #load} alone holds until it returns, and builds
     * the expectation from a model of its own ({@link #expectedShapes}).
     */
    private static void checkShapes(Path dir, GptModel block) throws MalformedModelException {
        GptConfig c = block.getConfig();
        Map<String, Shape> expected = expectedShapes(c);
        PairList<String, Parameter> params = block.getParameters();
        if (!expected.keySet().equals(new HashSet<>(params.keys()))) {
            // not the file's doing (DJL refuses a file whose names differ from the block's): two
            // GptModels of one configuration that differ, a structure that is not its config's
            throw new IllegalStateException(
                    "parameters " + params.keys() + " (expected: " + expected.keySet() + ")");
        }
        for (Pair<String, Parameter> p : params) {
            Shape got = p.getValue().getArray().getShape();
            Shape want = expected.get(p.getKey());
            if (!got.equals(want)) {
                throw new MalformedModelException(
                        dir
                                + ": parameter "
                                + p.getKey()
                                + " has shape "
                                + got
                                + " (expected: "
                                + want
                                + " for "
                                + c
                                + " of "
                                + CONFIG_FILE
                                + ")");
            }
        }
    }

    /**
     * The shape of every parameter of a {@link GptModel} of a configuration, by parameter name, as
     * the model's blocks set them when initialized: derived from the model rather than listed here,
     * so that a change to its structure cannot leave this check behind.
     *
     * <p>A fresh model is initialized with a scalar in place of every array: the blocks set the
     * shapes (DJL's {@code prepare}) before they ask the initializer for an array, and the
     * parameter keeps the shape it was prepared with, so nothing of the model's size is allocated
     * or drawn at random (a real initialization would be a second copy of the model, drawn at
     * random, on the default device, only to be thrown away). The scalars live on a CPU manager
     * closed before this returns. Does no I/O and shares nothing: safe from any thread.
     *
     * @param config the configuration
     * @return each parameter's name and shape, in the model's order
     */
    static Map<String, Shape> expectedShapes(GptConfig config) {
        GptModel fresh = new GptModel(config);
        fresh.setInitializer(
                (manager, shape, dataType) -> manager.zeros(new Shape(), dataType), p -> true);
        Map<String, Shape> shapes = new LinkedHashMap<>();
        try (NDManager scratch = NDManager.newBaseManager(Device.cpu())) {
            // any (batch, time) within the context: no parameter's shape depends on them
            fresh.initialize(scratch, DataType.FLOAT32, new Shape(1, config.getContextLength()));
            for (Pair<String, Parameter> p : fresh.getParameters()) {
                shapes.put(p.getKey(), p.getValue().getShape());
            }
        }
        return shapes;
    }

    /**
     * Returns the loaded model.
     *
     * @return the model (owned by this checkpoint)
     */
    public Model getModel() {
        return model;
    }

    /**
     * Returns the model's block.
     *
     * @return the GPT block
     */
    public GptModel getBlock() {
        return block;
    }

    /**
     * Returns the tokenizer saved with the model.
     *
     * @return the tokenizer
     */
    public Tokenizer getTokenizer() {
        return tokenizer;
    }

    /** Closes the model. */
    @Override
    public void close() {
        model.close();
    }
}
