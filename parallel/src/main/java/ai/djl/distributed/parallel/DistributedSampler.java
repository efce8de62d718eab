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
package ai.djl.distributed.parallel;

import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.training.dataset.RandomAccessDataset;
import ai.djl.training.dataset.Sampler;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;

/**
 * A DJL {@link Sampler} that gives each rank a disjoint share of every epoch, as PyTorch's {@code
 * DistributedSampler}: set it on a dataset's builder ({@code setSampling(sampler)}) on every rank.
 *
 * <p>For a dataset of N records and R ranks each rank gets {@code ceil(N / R)} indices, the index
 * list being padded by repeating its first indices ({@code dropLast} false, the default), or {@code
 * floor(N / R)} with the tail dropped ({@code dropLast} true). Rank r takes positions r, r + R, r +
 * 2R, ... of the (shuffled) list, so every rank has as many samples, hence as many batches and
 * steps, as every other: the ranks' collectives stay paired. Batches are cut from the rank's
 * indices in order; the last may be short.
 *
 * <p>With shuffling the list is a permutation drawn from {@code seed + epoch}; every rank must use
 * the same seed. The epoch is the one {@link #setEpoch} set; each pass ({@link #sample}) moves it
 * on by one, so epochs reshuffle without a call, and {@code setEpoch} at the start of every epoch
 * (as PyTorch requires) gives the same result. The order differs from PyTorch's ({@code
 * torch.randperm}), the shards' rule is the same.
 *
 * <p>For evaluation without duplicated samples, use {@code optDropLast(false)} with {@code
 * optPad(false)}: ranks then get up to one sample fewer than others and no index is repeated.
 *
 * <p>Not thread-safe: use one instance per dataset, from the training thread.
 */
public final class DistributedSampler implements Sampler {

    private final int batchSize;
    private final int rank;
    private final int worldSize;
    private final boolean shuffle;
    private final long seed;
    private final boolean dropLast;
    private final boolean pad;
    private int epoch;

    private DistributedSampler(Builder builder) {
        this.batchSize = builder.batchSize;
        this.rank = builder.rank;
        this.worldSize = builder.worldSize;
        this.shuffle = builder.shuffle;
        this.seed = builder.seed;
        this.dropLast = builder.dropLast;
        this.pad = builder.pad;
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
     * Sets the epoch of the next pass, which seeds its shuffle with {@code seed + epoch}.
     *
     * @param epoch the epoch, 0 for the first
     */
    public void setEpoch(int epoch) {
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch: " + epoch + " (expected: >= 0)");
        }
        this.epoch = epoch;
    }

    /**
     * Returns the epoch of the next pass.
     *
     * @return the epoch
     */
    public int getEpoch() {
        return epoch;
    }

    /**
     * Returns how many indices each rank gets from a dataset of {@code size} records.
     *
     * @param size the dataset's size
     * @return the samples per rank ({@code ceil(size / R)} when padding, {@code floor(size / R)}
     *     when dropping the tail); without padding or dropping, the most any rank gets
     */
    public long getNumSamples(long size) {
        if (dropLast) {
            return size / worldSize;
        }
        return (size + worldSize - 1) / worldSize;
    }

    /**
     * Returns this rank's indices for the current epoch, without moving the epoch on.
     *
     * @param size the dataset's size
     * @return the indices, in the order they are batched
     */
    public long[] indices(long size) {
        if (size < 0 || size > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    "size: " + size + " (expected: in [0, " + Integer.MAX_VALUE + "])");
        }
        int n = (int) size;
        int[] all = new int[n];
        for (int i = 0; i < n; i++) {
            all[i] = i;
        }
        if (shuffle) {
            // Fisher-Yates, from seed + epoch: the same permutation on every rank.
            SplittableRandom random = new SplittableRandom(seed + epoch);
            for (int i = n - 1; i > 0; i--) {
                int j = random.nextInt(i + 1);
                int t = all[i];
                all[i] = all[j];
                all[j] = t;
            }
        }
        long total = dropLast || pad ? getNumSamples(size) * worldSize : n;
        long[] mine = new long[(int) ((total - rank + worldSize - 1) / worldSize)];
        for (int k = 0; k < mine.length; k++) {
            // Padding repeats the list from its start, as often as needed.
            mine[k] = all[(int) ((rank + (long) k * worldSize) % n)];
        }
        return mine;
    }

    /** {@inheritDoc} */
    @Override
    public Iterator<List<Long>> sample(RandomAccessDataset dataset) {
        long[] mine = indices(dataset.size());
        epoch++;
        List<List<Long>> batches = new ArrayList<>();
        for (int from = 0; from < mine.length; from += batchSize) {
            List<Long> batch = new ArrayList<>(batchSize);
            for (int i = from; i < Math.min(mine.length, from + batchSize); i++) {
                batch.add(mine[i]);
            }
            batches.add(batch);
        }
        return batches.iterator();
    }

    /** {@inheritDoc} */
    @Override
    public int getBatchSize() {
        return batchSize;
    }

    /** Builds a {@link DistributedSampler}: {@code setX} values are required. */
    public static final class Builder {

        private int batchSize;
        private int rank = -1;
        private int worldSize = -1;
        private boolean shuffle = true;
        private long seed;
        private boolean dropLast;
        private boolean pad = true;

        Builder() {}

        /**
         * Sets the number of indices per batch.
         *
         * @param batchSize the per-rank batch size
         * @return this builder
         */
        public Builder setBatchSize(int batchSize) {
            this.batchSize = batchSize;
            return this;
        }

        /**
         * Sets this rank and the number of ranks from a process group.
         *
         * @param group the group whose ranks share the data
         * @return this builder
         */
        public Builder setProcessGroup(ProcessGroup group) {
            return setRank(group.getRank(), group.getSize());
        }

        /**
         * Sets this rank and the number of ranks.
         *
         * @param rank this rank
         * @param worldSize the number of ranks sharing the data
         * @return this builder
         */
        public Builder setRank(int rank, int worldSize) {
            this.rank = rank;
            this.worldSize = worldSize;
            return this;
        }

        /**
         * Sets whether each epoch draws a new permutation; default true.
         *
         * @param shuffle whether to shuffle
         * @return this builder
         */
        public Builder optShuffle(boolean shuffle) {
            this.shuffle = shuffle;
            return this;
        }

        /**
         * Sets the seed of the shuffle; default 0. Must be the same on every rank.
         *
         * @param seed the seed
         * @return this builder
         */
        public Builder optSeed(long seed) {
            this.seed = seed;
            return this;
        }

        /**
         * Sets whether the tail that does not divide evenly among the ranks is dropped rather than
         * padded; default false.
         *
         * @param dropLast whether to drop the tail
         * @return this builder
         */
        public Builder optDropLast(boolean dropLast) {
            this.dropLast = dropLast;
            return this;
        }

        /**
         * Sets whether, without {@code dropLast}, the index list is padded so that every rank gets
         * as many samples; default true. Turn it off for evaluation only: ranks may then run
         * different numbers of batches, which training steps (collectives) must not.
         *
         * @param pad whether to pad
         * @return this builder
         */
        public Builder optPad(boolean pad) {
            this.pad = pad;
            return this;
        }

        /**
         * Builds the sampler.
         *
         * @return the sampler
         * @throws IllegalArgumentException if the batch size or the ranks are missing or invalid
         */
        public DistributedSampler build() {
            if (batchSize <= 0) {
                throw new IllegalArgumentException("batchSize: " + batchSize + " (expected: > 0)");
            }
            if (worldSize <= 0 || rank < 0 || rank >= worldSize) {
                throw new IllegalArgumentException(
                        "rank, worldSize: "
                                + rank
                                + ", "
                                + worldSize
                                + " (expected: setRank or setProcessGroup, 0 <= rank <"
                                + " worldSize)");
            }
            return new DistributedSampler(this);
        }
    }
}
