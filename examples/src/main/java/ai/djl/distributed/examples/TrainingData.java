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
package ai.djl.distributed.examples;

import ai.djl.distributed.transformer.data.BpeTokenizer;
import ai.djl.distributed.transformer.data.ByteTokenizer;
import ai.djl.distributed.transformer.data.EuroparlCorpus;
import ai.djl.distributed.transformer.data.Tokenizer;
import ai.djl.distributed.transformer.data.UnigramBaseline;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The text a GPT example trains on: the Europarl corpus split into training and validation, a
 * tokenizer (byte-level, or BPE learned from the start of the training split), both splits as token
 * ids, and the unigram baseline of the validation split. Every rank computes the same.
 */
public final class TrainingData {

    /** How much training text (in characters) the BPE tokenizer learns its merges from. */
    static final int BPE_SAMPLE_CHARS = 4_000_000;

    private final Tokenizer tokenizer;
    private final int[] train;
    private final int[] validation;
    private final double unigramBaseline;

    private TrainingData(Tokenizer tokenizer, int[] train, int[] validation) {
        this.tokenizer = tokenizer;
        this.train = train;
        this.validation = validation;
        unigramBaseline = UnigramBaseline.crossEntropy(train, validation, tokenizer.vocabSize());
    }

    /**
     * Reads the corpus, builds the tokenizer and encodes both splits.
     *
     * @param kind {@code bpe} or {@code byte}
     * @param vocab the BPE vocabulary size
     * @param maxDocuments how many documents of the corpus to read at most
     * @return the data
     * @throws IOException if the corpus cannot be read
     */
    public static TrainingData prepare(String kind, int vocab, int maxDocuments)
            throws IOException {
        EuroparlCorpus corpus = EuroparlCorpus.load(maxDocuments);
        Tokenizer tokenizer;
        if ("byte".equals(kind)) {
            tokenizer = new ByteTokenizer();
        } else {
            List<String> sample = new ArrayList<>();
            long chars = 0;
            for (String d : corpus.train()) {
                if (chars >= BPE_SAMPLE_CHARS) {
                    break;
                }
                sample.add(d);
                chars += d.length();
            }
            tokenizer = BpeTokenizer.train(sample, vocab);
        }
        return new TrainingData(
                tokenizer,
                EuroparlCorpus.encode(tokenizer, corpus.train()),
                EuroparlCorpus.encode(tokenizer, corpus.validation()));
    }

    /**
     * Returns the tokenizer.
     *
     * @return the tokenizer
     */
    public Tokenizer getTokenizer() {
        return tokenizer;
    }

    /**
     * Returns the training split as token ids (not copied).
     *
     * @return the training tokens
     */
    public int[] getTrain() {
        return train;
    }

    /**
     * Returns the validation split as token ids (not copied).
     *
     * @return the validation tokens
     */
    public int[] getValidation() {
        return validation;
    }

    /**
     * Returns the cross-entropy of the validation split under the training split's unigram
     * distribution, in nats per token: the loss a model must beat.
     *
     * @return the unigram baseline
     */
    public double getUnigramBaseline() {
        return unigramBaseline;
    }
}
