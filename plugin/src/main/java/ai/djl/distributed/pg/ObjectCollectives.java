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
package ai.djl.distributed.pg;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Collectives on byte arrays (serialized objects), as {@code broadcast_object_list}, {@code
 * all_gather_object}, {@code gather_object} and {@code scatter_object_list}: the lengths go first,
 * then the payloads padded to the longest, as uint8 arrays on the group's default device (the CPU
 * where the group has a CPU backend, see {@link ProcessGroup#getDefaultDevice()}). Blocking; every
 * rank of the group must call the same method in the same order. Thread-safe.
 */
public final class ObjectCollectives {

    /** The length a rank sends in place of a payload it does not have. */
    private static final long REFUSED = -1;

    private final ProcessGroup group;

    ObjectCollectives(ProcessGroup group) {
        this.group = group;
    }

    /**
     * Broadcasts rank {@code src}'s bytes.
     *
     * @param bytes the payload on {@code src}; ignored elsewhere (may be null)
     * @param src the source rank
     * @return the payload, on every rank
     */
    public byte[] broadcast(byte[] bytes, int src) {
        Checks.rank("src", src, group.getSize());
        boolean root = group.getRank() == src;
        try (NDManager m = NDManager.newBaseManager(group.getDefaultDevice())) {
            // A refused payload still goes through the length's broadcast, as REFUSED, so the
            // other ranks fail now rather than at the group's timeout.
            NDArray length = m.create(new long[] {root ? lengthOf(bytes) : 0});
            group.broadcast(length, src);
            if (length.getLong() == REFUSED) {
                throw new IllegalArgumentException(
                        "bytes: null on the source rank "
                                + src
                                + " (expected: the payload on the source)");
            }
            int n = Math.toIntExact(length.getLong());
            NDArray payload = root ? payload(m, bytes, n) : m.zeros(new Shape(n), DataType.UINT8);
            group.broadcast(payload, src);
            return root ? bytes.clone() : payload.toByteArray();
        }
    }

    /**
     * Gathers every rank's bytes on every rank.
     *
     * @param bytes this rank's payload
     * @return every rank's payload, by rank
     */
    public List<byte[]> allGather(byte[] bytes) {
        try (NDManager m = NDManager.newBaseManager(group.getDefaultDevice())) {
            long[] lengths = lengths(m, bytes);
            int max = (int) Arrays.stream(lengths).max().orElse(0);
            NDArray out = m.zeros(new Shape((long) max * group.getSize()), DataType.UINT8);
            group.allGatherIntoTensor(out, payload(m, bytes, max));
            return unpad(out.toByteArray(), lengths, max);
        }
    }

    /**
     * Gathers every rank's bytes on rank {@code dst}.
     *
     * @param bytes this rank's payload
     * @param dst the destination rank
     * @return every rank's payload on {@code dst}; null elsewhere
     */
    public List<byte[]> gather(byte[] bytes, int dst) {
        Checks.rank("dst", dst, group.getSize());
        try (NDManager m = NDManager.newBaseManager(group.getDefaultDevice())) {
            long[] lengths = lengths(m, bytes);
            int max = (int) Arrays.stream(lengths).max().orElse(0);
            List<NDArray> outs = new ArrayList<>();
            if (group.getRank() == dst) {
                for (int i = 0; i < group.getSize(); i++) {
                    outs.add(m.zeros(new Shape(max), DataType.UINT8));
                }
            }
            group.gather(payload(m, bytes, max), outs, dst);
            if (group.getRank() != dst) {
                return null;
            }
            List<byte[]> result = new ArrayList<>();
            for (int i = 0; i < outs.size(); i++) {
                result.add(Arrays.copyOf(outs.get(i).toByteArray(), (int) lengths[i]));
            }
            return result;
        }
    }

    /**
     * Scatters rank {@code src}'s payloads, one per rank.
     *
     * @param payloads on {@code src}, one per rank; ignored elsewhere
     * @param src the source rank
     * @return this rank's payload
     */
    public byte[] scatter(List<byte[]> payloads, int src) {
        Checks.rank("src", src, group.getSize());
        boolean root = group.getRank() == src;
        int size = group.getSize();
        String refusal = root ? refusal(payloads, size) : null;
        try (NDManager m = NDManager.newBaseManager(group.getDefaultDevice())) {
            long[] all = new long[size];
            for (int i = 0; root && i < size; i++) {
                // A refusal goes through the lengths' broadcast too, so no rank waits it out.
                all[i] = refusal != null ? REFUSED : payloads.get(i).length;
            }
            NDArray lengths = m.create(all);
            group.broadcast(lengths, src);
            long[] known = lengths.toLongArray();
            if (known[0] == REFUSED) {
                throw new IllegalArgumentException(
                        refusal != null
                                ? refusal
                                : "payloads: refused on the source rank "
                                        + src
                                        + " (expected: one payload per rank there)");
            }
            int max = (int) Arrays.stream(known).max().orElse(0);
            List<NDArray> ins = new ArrayList<>();
            if (root) {
                for (byte[] p : payloads) {
                    ins.add(payload(m, p, max));
                }
            }
            NDArray out = m.zeros(new Shape(max), DataType.UINT8);
            group.scatter(out, ins, src);
            return Arrays.copyOf(out.toByteArray(), (int) known[group.getRank()]);
        }
    }

    /**
     * Gathers every rank's payload length. A rank without a payload sends {@link #REFUSED}, and
     * then every rank throws, naming the ranks, instead of the others waiting out the timeout.
     */
    private long[] lengths(NDManager m, byte[] bytes) {
        NDArray all = m.zeros(new Shape(group.getSize()), DataType.INT64);
        group.allGatherIntoTensor(all, m.create(new long[] {lengthOf(bytes)}));
        long[] lengths = all.toLongArray();
        List<Integer> refused = new ArrayList<>();
        for (int i = 0; i < lengths.length; i++) {
            if (lengths[i] == REFUSED) {
                refused.add(i);
            }
        }
        if (!refused.isEmpty()) {
            throw new IllegalArgumentException(
                    "bytes: null on rank(s) " + refused + " (expected: a payload on every rank)");
        }
        return lengths;
    }

    private static long lengthOf(byte[] bytes) {
        return bytes == null ? REFUSED : bytes.length;
    }

    /** Why the source's payloads are refused, or null when they are fine. */
    private static String refusal(List<byte[]> payloads, int size) {
        if (payloads == null || payloads.size() != size) {
            return "payloads: "
                    + (payloads == null ? "null" : payloads.size())
                    + " (expected: "
                    + size
                    + " payloads on the source)";
        }
        for (int i = 0; i < size; i++) {
            // Not payloads.contains(null): an immutable list (List.of) throws on that.
            if (payloads.get(i) == null) {
                return "payloads[" + i + "]: null (expected: a payload for every rank)";
            }
        }
        return null;
    }

    private static NDArray payload(NDManager m, byte[] bytes, int length) {
        return m.create(
                ByteBuffer.wrap(Arrays.copyOf(bytes, length)), new Shape(length), DataType.UINT8);
    }

    private static List<byte[]> unpad(byte[] all, long[] lengths, int max) {
        List<byte[]> result = new ArrayList<>(lengths.length);
        for (int i = 0; i < lengths.length; i++) {
            result.add(Arrays.copyOfRange(all, i * max, i * max + (int) lengths[i]));
        }
        return result;
    }
}
