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
