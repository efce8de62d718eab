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

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Record;
import ai.djl.util.Progress;

/**
 * Language-modelling examples cut from one token sequence: example {@code i} is the window of
 * {@code contextLength} tokens starting at {@code i * stride} as data, and the same window shifted
 * by one token as labels (the next token at every position), both INT64 of shape {@code
 * (contextLength)}.
 *
 * <p>A {@link RandomAccessDataset}: any sampler can pick the examples, a distributed one included
 * (each rank taking its own share of the indices). Holds the tokens in memory; {@link #get} copies
 * one window into a new pair of arrays.
 */
public final class TokenWindowDataset extends RandomAccessDataset {

    private final int[] tokens;
    private final int contextLength;
    private final int stride;

    private TokenWindowDataset(Builder builder) {
        super(builder);
        tokens = builder.tokens;
        contextLength = builder.contextLength;
        stride = builder.stride == 0 ? builder.contextLength : builder.stride;
    }

    /**
     * Returns a builder.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Returns the length of each example.
     *
     * @return the context length in tokens
     */
    public int getContextLength() {
        return contextLength;
    }

    /** {@inheritDoc} */
    @Override
    public Record get(NDManager manager, long index) {
        if (index < 0 || index >= availableSize()) {
            throw new IndexOutOfBoundsException(
                    "index: " + index + " (expected: 0 to " + (availableSize() - 1) + ")");
        }
        int start = Math.toIntExact(index * stride);
        long[] x = new long[contextLength];
        long[] y = new long[contextLength];
        for (int t = 0; t < contextLength; t++) {
            x[t] = tokens[start + t];
            y[t] = tokens[start + t + 1];
        }
        Shape shape = new Shape(contextLength);
        return new Record(
                new NDList(manager.create(x, shape)), new NDList(manager.create(y, shape)));
    }

    /** {@inheritDoc} */
    @Override
    protected long availableSize() {
        return (tokens.length - contextLength - 1) / stride + 1;
    }

    /** {@inheritDoc} */
    @Override
    public void prepare(Progress progress) {
        // the tokens are in memory already
    }

    /** Builds a {@link TokenWindowDataset}. */
    public static final class Builder extends BaseBuilder<Builder> {

        private int[] tokens;
        private int contextLength;
        private int stride;

        Builder() {}

        /** {@inheritDoc} */
        @Override
        protected Builder self() {
            return this;
        }

        /**
         * Sets the token sequence (not copied: do not modify it afterwards).
         *
         * @param tokens the token ids
         * @return this builder
         */
        public Builder setTokens(int[] tokens) {
            this.tokens = tokens;
            return this;
        }

        /**
         * Sets the length of each example.
         *
         * @param contextLength the number of tokens per example, at least 1
         * @return this builder
         */
        public Builder setContextLength(int contextLength) {
            this.contextLength = contextLength;
            return this;
        }

        /**
         * Sets the distance between the starts of consecutive examples (default: the context
         * length, so that examples do not overlap).
         *
         * @param stride the stride in tokens, at least 1
         * @return this builder
         */
        public Builder optStride(int stride) {
            this.stride = stride;
            return this;
        }

        /**
         * Validates and builds the dataset.
         *
         * @return the dataset
         */
        public TokenWindowDataset build() {
            if (tokens == null) {
                throw new IllegalArgumentException("tokens: null (expected: a token sequence)");
            }
            if (contextLength < 1) {
                throw new IllegalArgumentException(
                        "contextLength: " + contextLength + " (expected: >= 1)");
            }
            if (stride < 0) {
                throw new IllegalArgumentException("stride: " + stride + " (expected: >= 1)");
            }
            if (tokens.length < contextLength + 1) {
                throw new IllegalArgumentException(
                        "tokens: "
                                + tokens.length
                                + " (expected: at least contextLength + 1 = "
                                + (contextLength + 1)
                                + ")");
            }
            return new TokenWindowDataset(this);
        }
    }
}
