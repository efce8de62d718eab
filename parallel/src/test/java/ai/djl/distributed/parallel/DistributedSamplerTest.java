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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDManager;
import ai.djl.training.dataset.ArrayDataset;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * PyTorch's DistributedSampler rules: equal disjoint shards covering the data, reshuffled by epoch.
 */
class DistributedSamplerTest {

    private static DistributedSampler sampler(
            int rank, int world, boolean shuffle, boolean dropLast) {
        return DistributedSampler.builder()
                .setBatchSize(3)
                .setRank(rank, world)
                .optShuffle(shuffle)
                .optSeed(42)
                .optDropLast(dropLast)
                .build();
    }

    @Test
    void shardsAreEqualDisjointAndCoverTheDataset() {
        for (int world = 1; world <= 4; world++) {
            for (int n = 0; n <= 13; n++) {
                for (boolean dropLast : new boolean[] {false, true}) {
                    List<Long> all = new ArrayList<>();
                    long per = sampler(0, world, true, dropLast).getNumSamples(n);
                    for (int r = 0; r < world; r++) {
                        long[] mine = sampler(r, world, true, dropLast).indices(n);
                        assertEquals(per, mine.length, "n=" + n + " world=" + world);
                        for (long i : mine) {
                            all.add(i);
                        }
                    }
                    Set<Long> distinct = new HashSet<>(all);
                    String what = "n=" + n + " world=" + world + " dropLast=" + dropLast;
                    if (dropLast) {
                        // floor(n / world) each, no index twice
                        assertEquals(n / world, per, what);
                        assertEquals(all.size(), distinct.size(), what);
                    } else {
                        // ceil(n / world) each, every index present; only padding repeats
                        assertEquals((n + world - 1) / world, per, what);
                        assertEquals(n, distinct.size(), what);
                        assertEquals(per * world - n, all.size() - distinct.size(), what);
                    }
                    for (long i : all) {
                        assertTrue(i >= 0 && i < n, what);
                    }
                }
            }
        }
    }

    @Test
    void withoutShuffleRankRTakesEveryRthIndexAndPadsFromTheStart() {
        // PyTorch: indices [0..9] + [0, 1] padding, rank r takes [r::4]
        assertArrayEquals(new long[] {0, 4, 8}, sampler(0, 4, false, false).indices(10));
        assertArrayEquals(new long[] {1, 5, 9}, sampler(1, 4, false, false).indices(10));
        assertArrayEquals(new long[] {2, 6, 0}, sampler(2, 4, false, false).indices(10));
        assertArrayEquals(new long[] {3, 7, 1}, sampler(3, 4, false, false).indices(10));
        assertArrayEquals(new long[] {3, 7}, sampler(3, 4, false, true).indices(10));
    }

    @Test
    void epochsReshuffleTheSameWayOnEveryRankAndSetEpochRepeatsAnEpoch() {
        DistributedSampler a = sampler(0, 2, true, false);
        long[] e0 = a.indices(100);
        a.setEpoch(1);
        long[] e1 = a.indices(100);
        assertFalse(Arrays.equals(e0, e1));
        a.setEpoch(0);
        assertArrayEquals(e0, a.indices(100));
        // rank 1 in epoch 1 takes the other half of the same permutation
        DistributedSampler b = sampler(1, 2, true, false);
        b.setEpoch(1);
        Set<Long> union = new HashSet<>();
        for (long i : e1) {
            union.add(i);
        }
        for (long i : b.indices(100)) {
            assertTrue(union.add(i), "index " + i + " on both ranks");
        }
        assertEquals(100, union.size());
    }

    @Test
    void eachPassBatchesThisRanksIndicesAndMovesTheEpochOn() {
        try (NDManager m = NDManager.newBaseManager()) {
            ArrayDataset data =
                    new ArrayDataset.Builder().setData(m.arange(10f)).setSampling(3, false).build();
            DistributedSampler s = sampler(1, 2, true, false);
            long[] first = s.indices(10);
            Iterator<List<Long>> batches = s.sample(data);
            assertEquals(1, s.getEpoch());
            List<Long> seen = new ArrayList<>();
            List<Integer> sizes = new ArrayList<>();
            batches.forEachRemaining(
                    b -> {
                        seen.addAll(b);
                        sizes.add(b.size());
                    });
            assertEquals(List.of(3, 2), sizes);
            assertArrayEquals(first, seen.stream().mapToLong(Long::longValue).toArray());
            List<Long> second = new ArrayList<>();
            s.sample(data).forEachRemaining(second::addAll);
            assertFalse(seen.equals(second), "the second pass is a new epoch");
        }
    }

    @Test
    void withoutPaddingEvaluationSeesEachSampleOnce() {
        List<Long> all = new ArrayList<>();
        for (int r = 0; r < 3; r++) {
            DistributedSampler s =
                    DistributedSampler.builder()
                            .setBatchSize(4)
                            .setRank(r, 3)
                            .optShuffle(false)
                            .optPad(false)
                            .build();
            for (long i : s.indices(10)) {
                all.add(i);
            }
        }
        assertEquals(10, all.size());
        assertEquals(10, new HashSet<>(all).size());
    }

    @Test
    void badSettingsAreRejected() {
        assertThrows(
                IllegalArgumentException.class,
                () -> DistributedSampler.builder().setRank(0, 2).build());
        assertThrows(
                IllegalArgumentException.class,
                () -> DistributedSampler.builder().setBatchSize(2).setRank(2, 2).build());
        assertThrows(IllegalArgumentException.class, () -> sampler(0, 1, true, false).setEpoch(-1));
    }
}
