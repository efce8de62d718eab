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

import java.io.IOException;
import java.io.Reader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;
import java.util.Properties;

/**
 * The shape of a GPT-style decoder: vocabulary, context length, depth, heads and width.
 *
 * <p>The architecture is fixed: learned token and position embeddings, pre-LayerNorm blocks of
 * causal self-attention and a GELU MLP ({@link #getMlpRatio()} times wider than the model), a final
 * LayerNorm and a language-model head tied to the token embedding. Every linear layer has a bias.
 *
 * <p>Presets: {@code tiny} (2 layers, 2 heads, width 32, context 32: for tests) and {@code mini} (4
 * layers, 4 heads, width 128, context 128: the benchmark's shape and the example's default). The
 * vocabulary comes from the tokenizer. Immutable.
 */
public final class GptConfig {

    private static final int DEFAULT_MLP_RATIO = 4;

    private static final float DEFAULT_LAYER_NORM_EPS = 1e-5f;

    private final int vocabSize;
    private final int contextLength;
    private final int layers;
    private final int heads;
    private final int width;
    private final int mlpRatio;
    private final float dropout;
    private final float layerNormEps;

    private GptConfig(Builder b) {
        vocabSize = b.vocabSize;
        contextLength = b.contextLength;
        layers = b.layers;
        heads = b.heads;
        width = b.width;
        mlpRatio = b.mlpRatio;
        dropout = b.dropout;
        layerNormEps = b.layerNormEps;
    }

    /**
     * Returns a builder with no preset: every required value must be set.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns a builder holding a preset's shape; the vocabulary size is still to be set.
     *
     * @param name {@code tiny} (2 layers, width 32, context 32), {@code mini} (4 layers, width 128,
     *     context 128) or {@code small} (8 layers, width 256, 4 heads, context 128: about 6.5 M
     *     parameters with a 512-id vocabulary, eight times {@code mini}: {@code fsdp_basics}'s)
     * @return a new builder
     * @throws IllegalArgumentException if there is no such preset
     */
    public static Builder preset(String name) {
        switch (name.toLowerCase(Locale.ROOT)) {
            case "tiny":
                return builder().setContextLength(32).setLayers(2).setHeads(2).setWidth(32);
            case "mini":
                return builder().setContextLength(128).setLayers(4).setHeads(4).setWidth(128);
            case "small":
                return builder().setContextLength(128).setLayers(8).setHeads(4).setWidth(256);
            default:
                throw new IllegalArgumentException(
                        "preset: " + name + " (expected: tiny, mini or small)");
        }
    }

    /**
     * Returns the number of token ids the model reads and predicts.
     *
     * @return the vocabulary size
     */
    public int getVocabSize() {
        return vocabSize;
    }

    /**
     * Returns the longest sequence the model reads (the number of position embeddings).
     *
     * @return the context length in tokens
     */
    public int getContextLength() {
        return contextLength;
    }

    /**
     * Returns the number of transformer blocks.
     *
     * @return the depth
     */
    public int getLayers() {
        return layers;
    }

    /**
     * Returns the number of attention heads per block.
     *
     * @return the number of heads
     */
    public int getHeads() {
        return heads;
    }

    /**
     * Returns the model width (embedding size).
     *
     * @return the width
     */
    public int getWidth() {
        return width;
    }

    /**
     * Returns the width of one attention head: {@code width / heads}.
     *
     * @return the head width
     */
    public int getHeadWidth() {
        return width / heads;
    }

    /**
     * Returns how many times wider than the model the MLP's hidden layer is.
     *
     * @return the MLP ratio (4 as in GPT-2)
     */
    public int getMlpRatio() {
        return mlpRatio;
    }

    /**
     * Returns the dropout rate applied, in training, after attention weights and residual branches.
     *
     * @return the dropout rate; 0 disables dropout
     */
    public float getDropout() {
        return dropout;
    }

    /**
     * Returns the epsilon of every LayerNorm.
     *
     * @return the LayerNorm epsilon
     */
    public float getLayerNormEps() {
        return layerNormEps;
    }

    /**
     * Returns the number of trainable values of a model of this shape, the tied head counted once.
     *
     * @return the parameter count
     */
    public long paramCount() {
        long d = width;
        long hidden = d * mlpRatio;
        long perLayer = 4 * d + (3 * d * d + 3 * d) + (d * d + d) + 2 * d * hidden + hidden + d;
        return (long) vocabSize * d + (long) contextLength * d + layers * perLayer + 2 * d;
    }

    /**
     * Writes this configuration as a properties file.
     *
     * @param file the file to write
     * @throws IOException if writing fails
     */
    public void save(Path file) throws IOException {
        Properties p = new Properties();
        p.setProperty("vocabSize", Integer.toString(vocabSize));
        p.setProperty("contextLength", Integer.toString(contextLength));
        p.setProperty("layers", Integer.toString(layers));
        p.setProperty("heads", Integer.toString(heads));
        p.setProperty("width", Integer.toString(width));
        p.setProperty("mlpRatio", Integer.toString(mlpRatio));
        p.setProperty("dropout", Float.toString(dropout));
        p.setProperty("layerNormEps", Float.toString(layerNormEps));
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            p.store(w, "GPT configuration");
        }
    }

    /**
     * Reads a configuration written by {@link #save(Path)}.
     *
     * @param file the file to read
     * @return the configuration
     * @throws IOException if reading fails or a value is missing or malformed
     */
    public static GptConfig load(Path file) throws IOException {
        Properties p = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            p.load(r);
        }
        try {
            return builder()
                    .setVocabSize(Integer.parseInt(required(p, "vocabSize", file)))
                    .setContextLength(Integer.parseInt(required(p, "contextLength", file)))
                    .setLayers(Integer.parseInt(required(p, "layers", file)))
                    .setHeads(Integer.parseInt(required(p, "heads", file)))
                    .setWidth(Integer.parseInt(required(p, "width", file)))
                    .optMlpRatio(Integer.parseInt(required(p, "mlpRatio", file)))
                    .optDropout(Float.parseFloat(required(p, "dropout", file)))
                    .optLayerNormEps(Float.parseFloat(required(p, "layerNormEps", file)))
                    .build();
        } catch (IllegalArgumentException e) {
            throw new IOException(file + ": " + e.getMessage(), e);
        }
    }

    private static String required(Properties p, String key, Path file) throws IOException {
        String v = p.getProperty(key);
        if (v == null) {
            throw new IOException(file + ": missing " + key);
        }
        return v.trim();
    }

    /** {@inheritDoc} */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof GptConfig)) {
            return false;
        }
        GptConfig c = (GptConfig) o;
        return vocabSize == c.vocabSize
                && contextLength == c.contextLength
                && layers == c.layers
                && heads == c.heads
                && width == c.width
                && mlpRatio == c.mlpRatio
                && Float.compare(dropout, c.dropout) == 0
                && Float.compare(layerNormEps, c.layerNormEps) == 0;
    }

    /** {@inheritDoc} */
    @Override
    public int hashCode() {
        int h = vocabSize;
        h = 31 * h + contextLength;
        h = 31 * h + layers;
        h = 31 * h + heads;
        h = 31 * h + width;
        h = 31 * h + mlpRatio;
        h = 31 * h + Float.hashCode(dropout);
        return 31 * h + Float.hashCode(layerNormEps);
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return String.format(
                Locale.ROOT,
                "GptConfig(vocab=%d, context=%d, layers=%d, heads=%d, width=%d, mlpRatio=%d,"
                        + " dropout=%s, params=%d)",
                vocabSize,
                contextLength,
                layers,
                heads,
                width,
                mlpRatio,
                dropout,
                paramCount());
    }

    /** Builds a {@link GptConfig}: {@code setX} for required values, {@code optX} for the rest. */
    public static final class Builder {

        private int vocabSize;
        private int contextLength;
        private int layers;
        private int heads;
        private int width;
        private int mlpRatio = DEFAULT_MLP_RATIO;
        private float dropout;
        private float layerNormEps = DEFAULT_LAYER_NORM_EPS;

        Builder() {}

        /**
         * Sets the vocabulary size.
         *
         * @param vocabSize the number of token ids, at least 2
         * @return this builder
         */
        public Builder setVocabSize(int vocabSize) {
            this.vocabSize = vocabSize;
            return this;
        }

        /**
         * Sets the context length.
         *
         * @param contextLength the longest sequence the model reads, at least 1
         * @return this builder
         */
        public Builder setContextLength(int contextLength) {
            this.contextLength = contextLength;
            return this;
        }

        /**
         * Sets the number of blocks.
         *
         * @param layers the depth, at least 1
         * @return this builder
         */
        public Builder setLayers(int layers) {
            this.layers = layers;
            return this;
        }

        /**
         * Sets the number of attention heads.
         *
         * @param heads the number of heads, dividing the width
         * @return this builder
         */
        public Builder setHeads(int heads) {
            this.heads = heads;
            return this;
        }

        /**
         * Sets the model width.
         *
         * @param width the embedding size, a multiple of the number of heads
         * @return this builder
         */
        public Builder setWidth(int width) {
            this.width = width;
            return this;
        }

        /**
         * Sets the MLP ratio (default 4).
         *
         * @param mlpRatio the hidden width of the MLP over the model width, at least 1
         * @return this builder
         */
        public Builder optMlpRatio(int mlpRatio) {
            this.mlpRatio = mlpRatio;
            return this;
        }

        /**
         * Sets the dropout rate (default 0).
         *
         * @param dropout the rate, in [0, 1)
         * @return this builder
         */
        public Builder optDropout(float dropout) {
            this.dropout = dropout;
            return this;
        }

        /**
         * Sets the LayerNorm epsilon (default 1e-5, PyTorch's).
         *
         * @param layerNormEps a positive epsilon
         * @return this builder
         */
        public Builder optLayerNormEps(float layerNormEps) {
            this.layerNormEps = layerNormEps;
            return this;
        }

        /**
         * Validates the values and builds the configuration.
         *
         * @return the configuration
         * @throws IllegalArgumentException if a value is out of range
         */
        public GptConfig build() {
            check("vocabSize", vocabSize, 2);
            check("contextLength", contextLength, 1);
            check("layers", layers, 1);
            check("heads", heads, 1);
            check("width", width, 1);
            check("mlpRatio", mlpRatio, 1);
            if (width % heads != 0) {
                throw new IllegalArgumentException(
                        "width: " + width + " (expected: a multiple of heads=" + heads + ")");
            }
            if (!(dropout >= 0 && dropout < 1)) {
                throw new IllegalArgumentException("dropout: " + dropout + " (expected: [0, 1))");
            }
            if (!(layerNormEps > 0)) {
                throw new IllegalArgumentException(
                        "layerNormEps: " + layerNormEps + " (expected: > 0)");
            }
            return new GptConfig(this);
        }

        private static void check(String name, int value, int min) {
            if (value < min) {
                throw new IllegalArgumentException(
                        name + ": " + value + " (expected: >= " + min + ")");
            }
        }
    }
}
