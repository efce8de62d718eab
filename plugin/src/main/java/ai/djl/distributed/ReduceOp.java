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
package ai.djl.distributed;

import java.util.Objects;

/**
 * How a reducing collective (allReduce, reduce, reduceScatter) combines the ranks' values, as
 * {@code torch.distributed.ReduceOp}.
 *
 * <p>{@link #SUM}, {@link #PRODUCT}, {@link #MIN} and {@link #MAX} apply to every data type; on
 * booleans SUM and MAX mean OR, PRODUCT and MIN mean AND, as PyTorch's NCCL backend treats them.
 * {@link #BAND}, {@link #BOR} and {@link #BXOR} apply to integer and boolean types only. {@link
 * #AVG} and {@link #premulSum(double)} apply to floating-point types only. Instances are immutable
 * and thread-safe.
 */
public final class ReduceOp {

    /** The kind of a {@link ReduceOp}. */
    public enum Type {
        /** Element-wise sum. */
        SUM,
        /** Element-wise product. */
        PRODUCT,
        /** Element-wise minimum. */
        MIN,
        /** Element-wise maximum. */
        MAX,
        /** Bitwise AND. */
        BAND,
        /** Bitwise OR. */
        BOR,
        /** Bitwise XOR. */
        BXOR,
        /** The sum divided by the group's size. */
        AVG,
        /** The sum of each rank's value multiplied by a factor. */
        PREMUL_SUM
    }

    /** Element-wise sum. */
    public static final ReduceOp SUM = new ReduceOp(Type.SUM, 1);

    /** Element-wise product. */
    public static final ReduceOp PRODUCT = new ReduceOp(Type.PRODUCT, 1);

    /** Element-wise minimum. */
    public static final ReduceOp MIN = new ReduceOp(Type.MIN, 1);

    /** Element-wise maximum. */
    public static final ReduceOp MAX = new ReduceOp(Type.MAX, 1);

    /** Bitwise AND, for integer and boolean types. */
    public static final ReduceOp BAND = new ReduceOp(Type.BAND, 1);

    /** Bitwise OR, for integer and boolean types. */
    public static final ReduceOp BOR = new ReduceOp(Type.BOR, 1);

    /** Bitwise XOR, for integer and boolean types. */
    public static final ReduceOp BXOR = new ReduceOp(Type.BXOR, 1);

    /** The mean over the group's ranks, for floating-point types. */
    public static final ReduceOp AVG = new ReduceOp(Type.AVG, 1);

    private final Type type;
    private final double factor;

    private ReduceOp(Type type, double factor) {
        this.type = type;
        this.factor = factor;
    }

    /**
     * Returns PREMUL_SUM: the sum of every rank's value multiplied by {@code factor}, for
     * floating-point types (as {@code torch.distributed._make_nccl_premul_sum}). Each rank
     * multiplies its own input by its own factor before the sum, as NCCL's PreMulSum does, so the
     * factors may differ from rank to rank (a weighted sum).
     *
     * @param factor the multiplier; finite
     * @return the operation
     */
    public static ReduceOp premulSum(double factor) {
        if (!Double.isFinite(factor)) {
            throw new IllegalArgumentException("factor: " + factor + " (expected: finite)");
        }
        return new ReduceOp(Type.PREMUL_SUM, factor);
    }

    /**
     * Returns the kind of this operation.
     *
     * @return the kind
     */
    public Type getType() {
        return type;
    }

    /**
     * Returns the PREMUL_SUM factor, or 1 for every other kind.
     *
     * @return the factor
     */
    public double getFactor() {
        return factor;
    }

    /**
     * Returns whether this operation is bitwise (BAND, BOR, BXOR).
     *
     * @return whether it is bitwise
     */
    public boolean isBitwise() {
        return type == Type.BAND || type == Type.BOR || type == Type.BXOR;
    }

    /** {@inheritDoc} */
    @Override
    public boolean equals(Object o) {
        return o instanceof ReduceOp other
                && type == other.type
                && Double.compare(factor, other.factor) == 0;
    }

    /** {@inheritDoc} */
    @Override
    public int hashCode() {
        return Objects.hash(type, factor);
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return type == Type.PREMUL_SUM ? "PREMUL_SUM(" + factor + ")" : type.name();
    }
}
