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

import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;

import java.util.Arrays;
import java.util.List;

/**
 * What one rank called, as PyTorch's {@code TORCH_DISTRIBUTED_DEBUG=DETAIL} compares it across
 * ranks before a collective: its number in the group, the collective, the element type, the
 * reduction (PREMUL_SUM's factor is shown but not compared), the root, and the arrays' count,
 * elements and shapes. Every rank's fingerprint is a fixed number of longs, so that they can be
 * gathered in one collective.
 *
 * @param seq the collective's number in its group, from 0
 * @param kind the collective
 * @param dtype the element type's ordinal, or -1
 * @param op the reduction's ordinal, or -1
 * @param factor PREMUL_SUM's factor as IEEE bits, else 0
 * @param root the root rank, or -1
 * @param arrays the number of arrays
 * @param elements their elements in all
 * @param shapes a hash of their shapes, in order
 */
record Fingerprint(
        long seq,
        Collective kind,
        long dtype,
        long op,
        long factor,
        long root,
        long arrays,
        long elements,
        long shapes) {

    /** The longs of one fingerprint. */
    static final int LONGS = 9;

    /**
     * Takes a collective's fingerprint.
     *
     * @param seq its number in the group
     * @param kind the collective
     * @param op the reduction, or null
     * @param root the root rank, or -1
     * @param type the element type, or null
     * @param arrays the arrays whose shapes every rank must agree on
     * @return the fingerprint
     */
    static Fingerprint of(
            long seq, Collective kind, ReduceOp op, int root, DataType type, List<NDArray> arrays) {
        long elements = 0;
        long shapes = 17;
        for (NDArray a : arrays) {
            elements += a.size();
            shapes = shapes * 31 + Arrays.hashCode(a.getShape().getShape());
        }
        return new Fingerprint(
                seq,
                kind,
                type == null ? -1 : type.ordinal(),
                op == null ? -1 : op.getType().ordinal(),
                op == null ? 0 : Double.doubleToLongBits(op.getFactor()),
                root,
                arrays.size(),
                elements,
                shapes);
    }

    /** The fingerprint as longs, for a collective. */
    long[] toLongs() {
        return new long[] {seq, kind.ordinal(), dtype, op, factor, root, arrays, elements, shapes};
    }

    /**
     * Reads a fingerprint from longs.
     *
     * @param longs the longs, from {@code offset}
     * @param offset where it starts
     * @return the fingerprint, or null where the longs name no collective
     */
    static Fingerprint fromLongs(long[] longs, int offset) {
        long k = longs[offset + 1];
        if (k < 0 || k >= Collective.values().length) {
            return null;
        }
        return new Fingerprint(
                longs[offset],
                Collective.values()[(int) k],
                longs[offset + 2],
                longs[offset + 3],
                longs[offset + 4],
                longs[offset + 5],
                longs[offset + 6],
                longs[offset + 7],
                longs[offset + 8]);
    }

    /** Names the call, e.g. {@code #3 ALL_REDUCE(float32, 1 array, 1000 elements, SUM)}. */
    @Override
    public String toString() {
        StringBuilder b = new StringBuilder("#").append(seq).append(' ').append(kind).append('(');
        if (dtype >= 0 && dtype < DataType.values().length) {
            b.append(DataType.values()[(int) dtype]).append(", ");
        }
        b.append(arrays).append(arrays == 1 ? " array, " : " arrays, ");
        b.append(elements).append(" elements");
        if (op >= 0 && op < ReduceOp.Type.values().length) {
            b.append(", ").append(ReduceOp.Type.values()[(int) op]);
            if (ReduceOp.Type.values()[(int) op] == ReduceOp.Type.PREMUL_SUM) {
                b.append(' ').append(Double.longBitsToDouble(factor));
            }
        }
        if (root >= 0) {
            b.append(", root ").append(root);
        }
        return b.append(')').toString();
    }

    /**
     * Returns whether another rank made the same call. PREMUL_SUM's factor is not compared: each
     * rank multiplies its own input by its own factor, which may differ from rank to rank.
     *
     * @param other the other rank's call, or null
     * @return whether they match
     */
    boolean matches(Fingerprint other) {
        return other != null
                && seq == other.seq
                && kind == other.kind
                && dtype == other.dtype
                && op == other.op
                && root == other.root
                && arrays == other.arrays
                && elements == other.elements
                && shapes == other.shapes;
    }

    /** How this call differs from another: the fields that do not match, named. */
    String differences(Fingerprint other) {
        StringBuilder b = new StringBuilder();
        if (seq != other.seq) {
            b.append("sequence number, ");
        }
        if (kind != other.kind) {
            b.append("collective, ");
        }
        if (dtype != other.dtype) {
            b.append("element type, ");
        }
        if (op != other.op) {
            b.append("reduction, ");
        }
        if (root != other.root) {
            b.append("root, ");
        }
        if (arrays != other.arrays || elements != other.elements || shapes != other.shapes) {
            b.append("shapes, ");
        }
        return b.length() == 0 ? "nothing" : b.substring(0, b.length() - 2);
    }
}
