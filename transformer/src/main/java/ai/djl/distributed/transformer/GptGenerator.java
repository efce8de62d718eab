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
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.ParameterStore;

import java.util.Arrays;
import java.util.SplittableRandom;

/**
 * Generates text with a {@link GptModel}: reads a prompt, then repeatedly samples the next token
 * from the model's distribution (scaled by a temperature, cut to the {@code topK} most likely
 * tokens) and appends it.
 *
 * <p>The model conditions on the last {@code contextLength} tokens, as nanoGPT's {@code generate}.
 * With the key-value cache (the default) each new token costs one position's work while the
 * sequence fits the context; beyond it the window slides and every step recomputes the window, so
 * that both ways give the same tokens. Sampling draws from a {@link SplittableRandom} seeded per
 * call: the same model, prompt and seed give the same text. Immutable; one call at a time per model
 * (the engine's inference is not shared state, but the model's arrays are).
 */
public final class GptGenerator {

    private final GptModel model;
    private final float temperature;
    private final int topK;
    private final boolean useCache;

    private GptGenerator(Builder b) {
        model = b.model;
        temperature = b.temperature;
        topK = b.topK;
        useCache = b.useCache;
    }

    /**
     * Returns a builder for a generator of an initialised model.
     *
     * @param model the model
     * @return a new builder
     */
    public static Builder builder(GptModel model) {
        return new Builder(model);
    }

    /**
     * Generates tokens after a prompt.
     *
     * @param manager the manager under which the temporary arrays live (released on return)
     * @param prompt the prompt's token ids, at least one
     * @param maxNewTokens how many tokens to generate
     * @param seed the sampling seed
     * @return the prompt followed by the generated tokens
     * @throws IllegalArgumentException if the prompt is empty or holds an id out of the vocabulary
     */
    public int[] generate(NDManager manager, int[] prompt, int maxNewTokens, long seed) {
        GptConfig config = model.getConfig();
        if (prompt.length == 0) {
            throw new IllegalArgumentException("prompt: empty (expected: at least one token)");
        }
        for (int id : prompt) {
            if (id < 0 || id >= config.getVocabSize()) {
                throw new IllegalArgumentException(
                        "prompt token: "
                                + id
                                + " (expected: 0 to "
                                + (config.getVocabSize() - 1)
                                + ")");
            }
        }
        if (maxNewTokens < 0) {
            throw new IllegalArgumentException(
                    "maxNewTokens: " + maxNewTokens + " (expected: >= 0)");
        }
        SplittableRandom random = new SplittableRandom(seed);
        int[] seq = Arrays.copyOf(prompt, prompt.length + maxNewTokens);
        int len = prompt.length;
        int context = config.getContextLength();
        try (NDManager m = manager.newSubManager();
                KvCache cache = new KvCache(m, config)) {
            ParameterStore ps = new ParameterStore(m, false);
            for (int i = 0; i < maxNewTokens; i++) {
                double[] logits;
                try (NDManager step = m.newSubManager()) {
                    NDArray out;
                    if (useCache && len <= context) {
                        int from = cache.length();
                        out = model.forwardCached(ps, tokens(step, seq, from, len), cache);
                    } else {
                        int from = Math.max(0, len - context);
                        NDList in = new NDList(tokens(step, seq, from, len));
                        out = model.forward(ps, in, false).singletonOrThrow();
                    }
                    long last = out.getShape().get(1) - 1;
                    logits = out.get(0, last).toType(DataType.FLOAT64, false).toDoubleArray();
                }
                seq[len++] = sample(logits, random);
            }
        }
        return seq;
    }

    private static NDArray tokens(NDManager manager, int[] seq, int from, int to) {
        long[] ids = new long[to - from];
        for (int i = from; i < to; i++) {
            ids[i - from] = seq[i];
        }
        return manager.create(ids, new Shape(1, ids.length));
    }

    /**
     * Picks a token from logits: the most likely one (the lowest id among equals) when the
     * temperature is 0, else a draw from {@code softmax(logits / temperature)} restricted to the
     * {@code topK} largest logits (ties at the cut kept).
     */
    int sample(double[] logits, SplittableRandom random) {
        int argmax = 0;
        for (int i = 1; i < logits.length; i++) {
            if (logits[i] > logits[argmax]) {
                argmax = i;
            }
        }
        if (temperature == 0) {
            return argmax;
        }
        double cut = Double.NEGATIVE_INFINITY;
        if (topK > 0 && topK < logits.length) {
            double[] sorted = logits.clone();
            Arrays.sort(sorted);
            cut = sorted[sorted.length - topK];
        }
        double max = logits[argmax];
        double[] p = new double[logits.length];
        double total = 0;
        for (int i = 0; i < logits.length; i++) {
            p[i] = logits[i] >= cut ? Math.exp((logits[i] - max) / temperature) : 0;
            total += p[i];
        }
        double u = random.nextDouble() * total;
        for (int i = 0; i < p.length; i++) {
            u -= p[i];
            if (u < 0 && p[i] > 0) {
                return i;
            }
        }
        return argmax; // only reached through rounding at the very end of the distribution
    }

    /** Builds a {@link GptGenerator}. */
    public static final class Builder {

        private final GptModel model;
        private float temperature = 1;
        private int topK;
        private boolean useCache = true;

        Builder(GptModel model) {
            this.model = model;
        }

        /**
         * Sets the temperature (default 1): 0 picks the most likely token, lower is more
         * conservative, higher more random.
         *
         * @param temperature a temperature, at least 0
         * @return this builder
         */
        public Builder optTemperature(float temperature) {
            this.temperature = temperature;
            return this;
        }

        /**
         * Restricts sampling to the most likely tokens (default 0: no restriction).
         *
         * @param topK how many of the most likely tokens may be drawn; 0 for all
         * @return this builder
         */
        public Builder optTopK(int topK) {
            this.topK = topK;
            return this;
        }

        /**
         * Sets whether to use the key-value cache (default true).
         *
         * @param useCache false to recompute every position at every step
         * @return this builder
         */
        public Builder optUseCache(boolean useCache) {
            this.useCache = useCache;
            return this;
        }

        /**
         * Validates and builds the generator.
         *
         * @return the generator
         */
        public GptGenerator build() {
            if (!(temperature >= 0) || Float.isInfinite(temperature)) {
                throw new IllegalArgumentException(
                        "temperature: " + temperature + " (expected: finite, >= 0)");
            }
            if (topK < 0) {
                throw new IllegalArgumentException("topK: " + topK + " (expected: >= 0)");
            }
            return new GptGenerator(this);
        }
    }
}
