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

/**
 * The loss to beat: the cross-entropy of a text under the unigram distribution of another, the best
 * a model can do that ignores context. A language model whose validation loss is not clearly below
 * this has learned nothing about sequences.
 */
public final class UnigramBaseline {

    private UnigramBaseline() {}

    /**
     * Returns the mean cross-entropy, in nats per token, of {@code evaluated} under the token
     * frequencies of {@code reference}, add-one (Laplace) smoothed so that a token unseen in the
     * reference costs a finite amount: {@code -mean(log((count(t) + 1) / (n + vocabSize)))}.
     *
     * @param reference the tokens whose frequencies make the distribution (the training set)
     * @param evaluated the tokens scored (the validation set), not empty
     * @param vocabSize the vocabulary size
     * @return the cross-entropy in nats per token
     */
    public static double crossEntropy(int[] reference, int[] evaluated, int vocabSize) {
        if (evaluated.length == 0) {
            throw new IllegalArgumentException("evaluated: empty (expected: at least one token)");
        }
        long[] counts = new long[vocabSize];
        for (int t : reference) {
            Tokenizers.checkId(t, vocabSize);
            counts[t]++;
        }
        double logTotal = Math.log(reference.length + (double) vocabSize);
        double sum = 0;
        for (int t : evaluated) {
            Tokenizers.checkId(t, vocabSize);
            sum += logTotal - Math.log(counts[t] + 1.0);
        }
        return sum / evaluated.length;
    }
}
