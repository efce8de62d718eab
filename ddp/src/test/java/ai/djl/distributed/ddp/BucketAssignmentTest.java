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
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.ndarray.types.DataType;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.List;

/**
 * The bucket rules of PyTorch's DDP, on sizes where the expected buckets are worked out by hand.
 */
class BucketAssignmentTest {

    private static final long KIB = 1024;

    private static DataType[] floats(int n) {
        DataType[] t = new DataType[n];
        Arrays.fill(t, DataType.FLOAT32);
        return t;
    }

    private static void assertBuckets(BucketAssignment a, int[]... expected) {
        assertEquals(expected.length, a.size(), a.toString());
        for (int i = 0; i < expected.length; i++) {
            assertArrayEquals(expected[i], a.getBucket(i), a.toString());
        }
    }

    @Test
    void initialBucketsWalkDefinitionOrderThenReverseSoTheSmallFirstBucketGoesLast() {
        // 5 parameters of 400 KiB; limits 1 MiB then 2 MiB.
        long[] bytes = {400 * KIB, 400 * KIB, 400 * KIB, 400 * KIB, 400 * KIB};
        BucketAssignment a = BucketAssignment.initial(bytes, floats(5), 1024 * KIB, 2048 * KIB);
        // definition order: [0,1,2] reaches 1200 KiB >= 1 MiB and closes; [3,4] stays open
        assertBuckets(a, new int[] {3, 4}, new int[] {0, 1, 2});
        assertEquals(2048 * KIB, a.getSizeLimit(0));
        assertEquals(1024 * KIB, a.getSizeLimit(1));
    }

    @Test
    void aBucketClosesAtTheParameterThatReachesItsLimitAndABigParameterStandsAlone() {
        long[] bytes = {100, 300, 50, 5000, 10, 10};
        BucketAssignment a = BucketAssignment.initial(bytes, floats(6), 400, 1000);
        // [0,1] = 400 >= 400 closes; then limit 1000: [2,3] = 5050 closes; [4,5] open
        assertBuckets(a, new int[] {4, 5}, new int[] {2, 3}, new int[] {0, 1});
    }

    @Test
    void rebuiltBucketsFollowTheReadyOrderWithTheSmallBucketFirst() {
        long[] bytes = {400 * KIB, 400 * KIB, 400 * KIB, 400 * KIB, 400 * KIB};
        BucketAssignment a =
                BucketAssignment.rebuilt(
                        new int[] {4, 3, 2, 1, 0}, bytes, floats(5), 1024 * KIB, 2048 * KIB);
        assertBuckets(a, new int[] {4, 3, 2}, new int[] {1, 0});
        assertEquals(1024 * KIB, a.getSizeLimit(0));

        // a parameter missing from the ready order (no gradient) comes after the others
        BucketAssignment b =
                BucketAssignment.rebuilt(
                        new int[] {3, 1, 0}, bytes, floats(5), 1024 * KIB, 2048 * KIB);
        assertBuckets(b, new int[] {3, 1, 0}, new int[] {4, 2});
    }

    @Test
    void dataTypesNeverShareABucket() {
        long[] bytes = {8, 8, 8, 8};
        DataType[] types = {DataType.FLOAT32, DataType.FLOAT16, DataType.FLOAT32, DataType.FLOAT16};
        BucketAssignment a = BucketAssignment.initial(bytes, types, 16, 16);
        assertBuckets(a, new int[] {1, 3}, new int[] {0, 2});
    }

    @Test
    void defaultsAreDdps() {
        assertEquals(25L * 1024 * 1024, BucketAssignment.DEFAULT_BUCKET_CAP_BYTES);
        assertEquals(1024L * 1024, BucketAssignment.DEFAULT_FIRST_BUCKET_BYTES);
        // a small model fits one bucket
        BucketAssignment a =
                BucketAssignment.initial(
                        new long[] {4000, 12, 4000},
                        floats(3),
                        BucketAssignment.DEFAULT_FIRST_BUCKET_BYTES,
                        BucketAssignment.DEFAULT_BUCKET_CAP_BYTES);
        assertEquals(List.of(0, 1, 2), Arrays.stream(a.getBucket(0)).boxed().toList());
    }

    @Test
    void badArgumentsAreRejected() {
        assertThrows(
                IllegalArgumentException.class,
                () -> BucketAssignment.initial(new long[] {1}, floats(1), 0, 10));
        assertThrows(
                IllegalArgumentException.class,
                () ->
                        BucketAssignment.rebuilt(
                                new int[] {0, 0}, new long[] {1, 1}, floats(2), 1, 1));
        assertThrows(
                IndexOutOfBoundsException.class,
                () -> BucketAssignment.rebuilt(new int[] {2}, new long[] {1, 1}, floats(2), 1, 1));
    }
}
