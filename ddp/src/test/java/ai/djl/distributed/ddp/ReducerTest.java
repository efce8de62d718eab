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
package ai.djl.distributed.ddp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/** The reducer on hand-made gradients whose averages are exact in float32. */
@Timeout(60)
class ReducerTest {

    private static final List<String> NAMES = List.of("a", "b", "c", "d", "e", "f");
    private static final Shape[] SHAPES = {
        new Shape(3, 4), new Shape(5), new Shape(2, 2, 2), new Shape(7), new Shape(1), new Shape(10)
    };

    private static DataType[] floats() {
        DataType[] t = new DataType[SHAPES.length];
        Arrays.fill(t, DataType.FLOAT32);
        return t;
    }

    /** Rank r's gradient of parameter p: (r + 1) * (p + 1) + element index. */
    private static NDArray gradient(NDManager m, int rank, int p) {
        float[] v = new float[(int) SHAPES[p].size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = (rank + 1) * (p + 1) + i;
        }
        return m.create(v, SHAPES[p]);
    }

    private static float[] average(int ranks, int p) {
        float[] v = new float[(int) SHAPES[p].size()];
        for (int i = 0; i < v.length; i++) {
            v[i] = (ranks + 1) / 2f * (p + 1) + i;
        }
        return v;
    }

    /** A reducer of the test's parameters, which the caller closes. */
    private static Reducer reducer(
            ProcessGroup group, NDManager m, CommHook hook, long firstBucket, long cap) {
        return new Reducer(group, m, NAMES, SHAPES, floats(), hook, firstBucket, cap);
    }

    /** Reduces once; returns the parameters in the order handed over, with their values. */
    private static Map<Integer, float[]> reduceOnce(
            Reducer reducer, NDManager m, int rank, boolean[] used, boolean findUnused) {
        Map<Integer, float[]> got = new LinkedHashMap<>();
        reducer.reduce(
                p -> gradient(m, rank, p),
                used,
                findUnused,
                (p, g) -> {
                    assertEquals(SHAPES[p], g.getShape());
                    got.put(p, g.toFloatArray());
                });
        return got;
    }

    /** Asserts the buckets, in reduction order, and the limit each was filled against. */
    private static void assertBuckets(int[][] buckets, long[] limits, BucketAssignment a) {
        assertEquals(buckets.length, a.size(), a.toString());
        for (int b = 0; b < buckets.length; b++) {
            assertArrayEquals(buckets[b], a.getBucket(b), a.toString());
            assertEquals(limits[b], a.getSizeLimit(b), "the limit of bucket " + b);
        }
    }

    private static boolean[] all() {
        boolean[] used = new boolean[SHAPES.length];
        Arrays.fill(used, true);
        return used;
    }

    @Test
    void aModelSpanningManyBucketsIsAveragedExactlyInBucketOrder() throws Exception {
        List<Object> results =
                Ranks.run(
                        3,
                        (group, m) -> {
                            // 8-byte first bucket, 24-byte cap: 4 buckets for 6 parameters
                            try (Reducer r = reducer(group, m, CommHooks.allReduce(), 8, 24)) {
                                BucketAssignment a = r.getAssignment();
                                // PyTorch's rules by hand: a (48 bytes) fills the 8-byte
                                // first bucket alone; then b+c (52), d (28), e+f (44) reach 24
                                // each; the buckets, by their smallest index, are reversed
                                assertBuckets(
                                        new int[][] {{4, 5}, {3}, {1, 2}, {0}},
                                        new long[] {24, 24, 24, 8},
                                        a);
                                for (int step = 0; step < 2; step++) {
                                    Map<Integer, float[]> got =
                                            reduceOnce(r, m, group.getRank(), all(), false);
                                    List<Integer> order = new ArrayList<>();
                                    for (int[] b : a.getBuckets()) {
                                        for (int p : b) {
                                            order.add(p);
                                        }
                                    }
                                    assertEquals(order, new ArrayList<>(got.keySet()));
                                    for (int p = 0; p < SHAPES.length; p++) {
                                        assertArrayEquals(average(3, p), got.get(p), NAMES.get(p));
                                    }
                                }
                                return null;
                            }
                        });
        assertEquals(3, results.size());
    }

    /**
     * A consumer failing on the first bucket fails the step with its own exception, once every
     * bucket's reduction is over; the next step is reduced exactly.
     */
    @Test
    void aFailedStepLeavesTheReducerReadyForTheNext() throws Exception {
        Ranks.run(
                2,
                (group, m) -> {
                    try (Reducer r = reducer(group, m, CommHooks.allReduce(), 8, 24)) {
                        IllegalStateException e =
                                assertThrows(
                                        IllegalStateException.class,
                                        () ->
                                                r.reduce(
                                                        p -> gradient(m, group.getRank(), p),
                                                        all(),
                                                        false,
                                                        (p, g) -> {
                                                            throw new IllegalStateException(
                                                                    "consumer failed on " + p);
                                                        }));
                        assertTrue(e.getMessage().startsWith("consumer failed"), e.getMessage());
                        assertFalse(r.isPending());
                        Map<Integer, float[]> got = reduceOnce(r, m, group.getRank(), all(), false);
                        for (int p = 0; p < SHAPES.length; p++) {
                            assertArrayEquals(average(2, p), got.get(p), NAMES.get(p));
                        }
                    }
                    return null;
                });
    }

    @Test
    void aHookReturningNullIsNamed() throws Exception {
        Ranks.run(
                2,
                (group, m) -> {
                    CommHook broken = (g, bucket) -> CompletableFuture.completedFuture(null);
                    try (Reducer r = reducer(group, m, broken, 8, 24)) {
                        IllegalStateException e =
                                assertThrows(
                                        IllegalStateException.class,
                                        () -> reduceOnce(r, m, group.getRank(), all(), false));
                        assertTrue(
                                e.getMessage().contains("bucket 0: null (expected: the reduced"),
                                e.getMessage());
                    }
                    return null;
                });
    }

    @Test
    void fp16CompressionAveragesToFloat16Precision() throws Exception {
        Ranks.run(
                2,
                (group, m) -> {
                    try (Reducer r = reducer(group, m, CommHooks.fp16Compress(), 8, 24)) {
                        Map<Integer, float[]> got = reduceOnce(r, m, group.getRank(), all(), false);
                        for (int p = 0; p < SHAPES.length; p++) {
                            float[] want = average(2, p);
                            for (int i = 0; i < want.length; i++) {
                                assertEquals(want[i], got.get(p)[i], 1e-3 * want[i], NAMES.get(p));
                            }
                        }
                        return null;
                    }
                });
    }

    @Test
    void rebuildUsesRankZerosReadyOrderOnEveryRank() throws Exception {
        int[] rank0 = {5, 4, 3, 2, 1, 0};
        List<BucketAssignment> got =
                Ranks.run(
                        2,
                        (group, m) -> {
                            try (Reducer r = reducer(group, m, CommHooks.allReduce(), 8, 24)) {
                                r.rebuild(
                                        group.getRank() == 0
                                                ? rank0
                                                : new int[] {0, 1, 2, 3, 4, 5});
                                // the rebuilt buckets reduce correctly too
                                Map<Integer, float[]> values =
                                        reduceOnce(r, m, group.getRank(), all(), false);
                                assertArrayEquals(average(2, 2), values.get(2));
                                return r.getAssignment();
                            }
                        });
        // rank 0's order filled by hand, not reversed: the small first bucket now comes first,
        // f (40 bytes) filling it alone; then e+d (32), c (32), b+a (68) reach 24 each
        for (BucketAssignment a : got) {
            assertBuckets(new int[][] {{5}, {4, 3}, {2}, {1, 0}}, new long[] {8, 24, 24, 24}, a);
        }
    }

    @Test
    void parametersNoRankUsedAreFoundAndLeftOut() throws Exception {
        List<Map<Integer, float[]>> got =
                Ranks.run(
                        2,
                        (group, m) -> {
                            try (Reducer r =
                                    reducer(group, m, CommHooks.allReduce(), 1 << 20, 1 << 20)) {
                                boolean[] used = all();
                                used[2] = false; // c: used nowhere
                                used[3] = group.getRank() == 0; // d: used on rank 0 only
                                return reduceOnce(r, m, group.getRank(), used, true);
                            }
                        });
        for (Map<Integer, float[]> g : got) {
            assertEquals(List.of(0, 1, 3, 4, 5), new ArrayList<>(g.keySet()));
        }
    }
}
