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

import ai.djl.ndarray.types.DataType;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Which gradients share a bucket, and the order in which buckets are reduced: PyTorch DDP's {@code
 * _compute_bucket_assignment_by_size}. Parameters are identified by their index in the model's
 * parameter list (DJL's {@code Block.getParameters()} order, the order they are defined in).
 *
 * <p>Parameters are walked in a given order and added to the open bucket of their data type; a
 * bucket closes once it holds at least its size limit (so the parameter that crosses the limit is
 * still in it; a parameter larger than the limit gets a bucket of its own). The first bucket of a
 * data type has the first limit ({@link #DEFAULT_FIRST_BUCKET_BYTES}), later ones the second
 * ({@link #DEFAULT_BUCKET_CAP_BYTES}). Two assignments are made:
 *
 * <ul>
 *   <li>{@link #initial}: walk in definition order, sort the buckets by their lowest index, then
 *       reverse them, since gradients become ready roughly in reverse definition order. The small
 *       bucket holds the first-defined parameters and is reduced last, so the reduction left after
 *       the last gradient is short.
 *   <li>{@link #rebuilt}: walk in the order gradients became ready (recorded during the first
 *       step), no sorting: the small bucket is reduced first, so communication starts early.
 * </ul>
 *
 * <p>Immutable.
 */
public final class BucketAssignment {

    /** The size limit of every bucket but the first: 25 MiB, PyTorch's {@code bucket_cap_mb}. */
    public static final long DEFAULT_BUCKET_CAP_BYTES = 25L << 20;

    /** The size limit of the first bucket: 1 MiB, PyTorch's {@code _DEFAULT_FIRST_BUCKET_BYTES}. */
    public static final long DEFAULT_FIRST_BUCKET_BYTES = 1L << 20;

    private final List<int[]> buckets;
    private final long[] sizeLimits;

    private BucketAssignment(List<int[]> buckets, long[] sizeLimits) {
        this.buckets = buckets;
        this.sizeLimits = sizeLimits;
    }

    /**
     * Assigns parameters in definition order, then reverses the buckets (DDP's construction-time
     * assignment).
     *
     * @param bytes each parameter's size in bytes, by index
     * @param types each parameter's data type, by index
     * @param firstBucketBytes the first bucket's limit
     * @param bucketCapBytes every later bucket's limit
     * @return the assignment
     */
    public static BucketAssignment initial(
            long[] bytes, DataType[] types, long firstBucketBytes, long bucketCapBytes) {
        int[] order = new int[bytes.length];
        Arrays.setAll(order, i -> i);
        List<Open> closed = assign(order, bytes, types, limits(firstBucketBytes, bucketCapBytes));
        closed.sort(
                Comparator.comparingInt(b -> b.indices.stream().mapToInt(i -> i).min().orElse(0)));
        java.util.Collections.reverse(closed);
        return of(closed);
    }

    /**
     * Assigns parameters in the order their gradients became ready (DDP's one-time rebuild).
     *
     * @param readyOrder parameter indices, first ready first; indices missing from it (parameters
     *     that got no gradient) follow in reverse definition order
     * @param bytes each parameter's size in bytes, by index
     * @param types each parameter's data type, by index
     * @param firstBucketBytes the first bucket's limit
     * @param bucketCapBytes every later bucket's limit
     * @return the assignment
     */
    public static BucketAssignment rebuilt(
            int[] readyOrder,
            long[] bytes,
            DataType[] types,
            long firstBucketBytes,
            long bucketCapBytes) {
        return of(
                assign(
                        completeOrder(readyOrder, bytes.length),
                        bytes,
                        types,
                        limits(firstBucketBytes, bucketCapBytes)));
    }

    /**
     * Returns the number of buckets.
     *
     * @return the count
     */
    public int size() {
        return buckets.size();
    }

    /**
     * Returns the parameter indices of a bucket, in their order inside its flat buffer.
     *
     * @param bucket the bucket's index, in reduction order
     * @return a copy of its indices
     */
    public int[] getBucket(int bucket) {
        return buckets.get(bucket).clone();
    }

    /**
     * Returns every bucket's parameter indices, in reduction order.
     *
     * @return copies of the buckets
     */
    public List<int[]> getBuckets() {
        List<int[]> copy = new ArrayList<>(buckets.size());
        for (int[] b : buckets) {
            copy.add(b.clone());
        }
        return copy;
    }

    /**
     * Returns the size limit a bucket was filled against.
     *
     * @param bucket the bucket's index, in reduction order
     * @return its limit in bytes
     */
    public long getSizeLimit(int bucket) {
        return sizeLimits[bucket];
    }

    /** {@inheritDoc} */
    @Override
    public boolean equals(Object o) {
        if (!(o instanceof BucketAssignment)) {
            return false;
        }
        BucketAssignment other = (BucketAssignment) o;
        if (other.buckets.size() != buckets.size()) {
            return false;
        }
        for (int i = 0; i < buckets.size(); i++) {
            if (!Arrays.equals(buckets.get(i), other.buckets.get(i))) {
                return false;
            }
        }
        return Arrays.equals(sizeLimits, other.sizeLimits);
    }

    /** {@inheritDoc} */
    @Override
    public int hashCode() {
        int h = Arrays.hashCode(sizeLimits);
        for (int[] b : buckets) {
            h = 31 * h + Arrays.hashCode(b);
        }
        return h;
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder("BucketAssignment[");
        for (int i = 0; i < buckets.size(); i++) {
            sb.append(i == 0 ? "" : ", ").append(Arrays.toString(buckets.get(i)));
        }
        return sb.append(']').toString();
    }

    private static long[] limits(long first, long cap) {
        if (first <= 0 || cap <= 0) {
            throw new IllegalArgumentException(
                    "bucket limits: " + first + ", " + cap + " bytes (expected: > 0)");
        }
        return new long[] {first, cap};
    }

    private static int[] completeOrder(int[] readyOrder, int n) {
        boolean[] seen = new boolean[n];
        int[] order = new int[n];
        int k = 0;
        for (int i : readyOrder) {
            Objects.checkIndex(i, n);
            if (seen[i]) {
                throw new IllegalArgumentException(
                        "readyOrder: parameter " + i + " twice (expected: each at most once)");
            }
            seen[i] = true;
            order[k++] = i;
        }
        for (int i = n - 1; i >= 0; i--) {
            if (!seen[i]) {
                order[k++] = i;
            }
        }
        return order;
    }

    private static List<Open> assign(int[] order, long[] bytes, DataType[] types, long[] limits) {
        if (bytes.length != types.length) {
            throw new IllegalArgumentException(
                    "bytes, types: "
                            + bytes.length
                            + ", "
                            + types.length
                            + " entries (expected: one each per parameter)");
        }
        List<Open> closed = new ArrayList<>();
        // One open bucket and one position in the limits per data type, as DDP keys by type.
        Map<DataType, Open> open = new LinkedHashMap<>();
        Map<DataType, Integer> limitAt = new LinkedHashMap<>();
        for (int i : order) {
            Open bucket = open.computeIfAbsent(types[i], t -> new Open());
            bucket.indices.add(i);
            bucket.bytes += bytes[i];
            int at = limitAt.getOrDefault(types[i], 0);
            bucket.limit = limits[at];
            if (bucket.bytes >= bucket.limit) {
                closed.add(bucket);
                open.remove(types[i]);
                limitAt.put(types[i], Math.min(at + 1, limits.length - 1));
            }
        }
        closed.addAll(open.values());
        return closed;
    }

    private static BucketAssignment of(List<Open> closed) {
        List<int[]> buckets = new ArrayList<>(closed.size());
        long[] limits = new long[closed.size()];
        for (int i = 0; i < closed.size(); i++) {
            buckets.add(closed.get(i).indices.stream().mapToInt(x -> x).toArray());
            limits[i] = closed.get(i).limit;
        }
        return new BucketAssignment(List.copyOf(buckets), limits);
    }

    /** A bucket being filled. */
    private static final class Open {
        final List<Integer> indices = new ArrayList<>();
        long bytes;
        long limit;
    }
}
