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

import java.nio.file.Path;

/** What a GPT training example measured and wrote: returned by {@code runExample}. Immutable. */
public final class GptRunResult {

    private final int worldSize;
    private final int steps;
    private final long tokens;
    private final double trainSeconds;
    private final double totalSeconds;
    private final double trainLoss;
    private final double validationLoss;
    private final double unigramBaseline;
    private final double unigramBaselineWholeSplit;
    private final String sample;
    private final Path outputDir;
    private final Path modelDir;
    private final long parameterChecksum;

    GptRunResult(
            int worldSize,
            int steps,
            long tokens,
            double trainSeconds,
            double totalSeconds,
            double trainLoss,
            double validationLoss,
            double unigramBaseline,
            double unigramBaselineWholeSplit,
            String sample,
            Path outputDir,
            Path modelDir,
            long parameterChecksum) {
        this.worldSize = worldSize;
        this.steps = steps;
        this.tokens = tokens;
        this.trainSeconds = trainSeconds;
        this.totalSeconds = totalSeconds;
        this.trainLoss = trainLoss;
        this.validationLoss = validationLoss;
        this.unigramBaseline = unigramBaseline;
        this.unigramBaselineWholeSplit = unigramBaselineWholeSplit;
        this.sample = sample;
        this.outputDir = outputDir;
        this.modelDir = modelDir;
        this.parameterChecksum = parameterChecksum;
    }

    /**
     * Returns the number of ranks that trained the model together.
     *
     * @return the world size, 1 when run alone
     */
    public int getWorldSize() {
        return worldSize;
    }

    /**
     * Returns the number of optimizer steps taken.
     *
     * @return the steps
     */
    public int getSteps() {
        return steps;
    }

    /**
     * Returns the number of training tokens read by all ranks together (steps x batch x context x
     * world size).
     *
     * @return the tokens
     */
    public long getTokens() {
        return tokens;
    }

    /**
     * Returns the time spent in the training loop, periodic validation included.
     *
     * @return seconds
     */
    public double getTrainSeconds() {
        return trainSeconds;
    }

    /**
     * Returns the time of the whole run: corpus, tokenizer, training, final validation, saving and
     * sampling.
     *
     * @return seconds
     */
    public double getTotalSeconds() {
        return totalSeconds;
    }

    /**
     * Returns the mean training loss of the last 50 steps.
     *
     * @return nats per token
     */
    public double getTrainLoss() {
        return trainLoss;
    }

    /**
     * Returns the final validation loss.
     *
     * @return nats per token
     */
    public double getValidationLoss() {
        return validationLoss;
    }

    /**
     * Returns the unigram baseline on the very tokens of the final validation.
     *
     * @return nats per token
     */
    public double getUnigramBaseline() {
        return unigramBaseline;
    }

    /**
     * Returns the unigram baseline on the whole validation split.
     *
     * @return nats per token
     */
    public double getUnigramBaselineWholeSplit() {
        return unigramBaselineWholeSplit;
    }

    /**
     * Returns the generated sample, prompt included. Rank 0 alone generates one.
     *
     * @return the text, empty on other ranks
     */
    public String getSample() {
        return sample;
    }

    /**
     * Returns the output directory.
     *
     * @return the directory holding loss.csv, loss.png, model/ and sample.txt
     */
    public Path getOutputDir() {
        return outputDir;
    }

    /**
     * Returns the directory of the saved model (a {@code GptCheckpoint}).
     *
     * @return the model directory
     */
    public Path getModelDir() {
        return modelDir;
    }

    /**
     * Returns a checksum of the trained parameters' bits, which every rank checked to be the same
     * on every other rank at the end of training.
     *
     * @return the checksum
     */
    public long getParameterChecksum() {
        return parameterChecksum;
    }
}
