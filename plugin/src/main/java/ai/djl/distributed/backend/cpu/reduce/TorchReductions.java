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
package ai.djl.distributed.backend.cpu.reduce;

import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * {@link Reductions}' SUM, PRODUCT, scale and divide done by libtorch on the buffers' own memory,
 * for large direct buffers of float32, float64 and float16; everything else goes to {@link
 * Reductions}. Results are the same bit for bit (NaN payloads aside): libtorch also computes
 * float16 in float32 and rounds to nearest-even.
 *
 * <p>DJL's PyTorch engine wraps a direct {@link ByteBuffer} without copying ({@code
 * torch::from_blob} on its address), so {@code NDArray.addi} writes the sums straight into dst. On
 * one thread and 32 MiB, libtorch's add was about 1.15 times as fast as {@link Reductions} on
 * float32 and 13 times on float16 (Java 17 cannot vectorize the float16 conversions). Each call
 * costs about 6 us of JNI and bookkeeping, so smaller operands stay in Java: below {@link
 * #DEFAULT_MIN_BYTES} for float32 and float64, below {@link #DEFAULT_MIN_HALF_BYTES} for float16.
 * bfloat16 stays in Java: DJL 0.35.1's JNI has no bfloat16 case for wrapped memory and aborts the
 * process. libtorch uses as many threads as the engine is configured for ({@code
 * ai.djl.pytorch.num_threads}).
 *
 * <p>Thread-safe: each call works in its own sub-manager of the given one, closed before it
 * returns.
 */
public final class TorchReductions {

    /** The smallest float32 or float64 operand, in bytes, that goes to libtorch by default. */
    public static final int DEFAULT_MIN_BYTES = 256 * 1024;

    /** The smallest float16 operand, in bytes, that goes to libtorch by default. */
    public static final int DEFAULT_MIN_HALF_BYTES = 8 * 1024;

    private final NDManager manager;
    private final int minBytes;
    private final int minHalfBytes;

    /**
     * Creates reductions through a PyTorch engine's manager, with the default thresholds.
     *
     * @param manager a manager of DJL's PyTorch engine, on the CPU; it stays the caller's
     * @throws IllegalArgumentException if the manager is not PyTorch's on the CPU
     */
    public TorchReductions(NDManager manager) {
        this(manager, DEFAULT_MIN_BYTES, DEFAULT_MIN_HALF_BYTES);
    }

    /**
     * Creates reductions through a PyTorch engine's manager.
     *
     * @param manager a manager of DJL's PyTorch engine, on the CPU; it stays the caller's
     * @param minBytes the smallest float32 or float64 operand, in bytes, to hand to libtorch
     * @param minHalfBytes the smallest float16 operand, in bytes, to hand to libtorch
     * @throws IllegalArgumentException if the manager is not PyTorch's on the CPU, or a threshold
     *     is negative
     */
    public TorchReductions(NDManager manager, int minBytes, int minHalfBytes) {
        Objects.requireNonNull(manager, "manager");
        String engine = manager.getEngine().getEngineName();
        if (!"PyTorch".equals(engine) || manager.getDevice().isGpu()) {
            throw new IllegalArgumentException(
                    "manager: "
                            + engine
                            + " on "
                            + manager.getDevice()
                            + " (expected: PyTorch on cpu)");
        }
        if (minBytes < 0) {
            throw new IllegalArgumentException("minBytes: " + minBytes + " (expected: >= 0)");
        }
        if (minHalfBytes < 0) {
            throw new IllegalArgumentException(
                    "minHalfBytes: " + minHalfBytes + " (expected: >= 0)");
        }
        this.manager = manager;
        this.minBytes = minBytes;
        this.minHalfBytes = minHalfBytes;
    }

    /**
     * Does what {@link Reductions#reduce} does, through libtorch when it can.
     *
     * @param op SUM, PRODUCT, MIN, MAX, BAND, BOR or BXOR
     * @param type the elements' type
     * @param dst the destination, which also holds the left operands
     * @param dstOffset the byte offset of dst's first element
     * @param src the right operands; it may be dst itself if the two ranges do not overlap
     * @param srcOffset the byte offset of src's first element
     * @param count the number of elements
     * @throws IllegalArgumentException as {@link Reductions#reduce} does
     */
    public void reduce(
            ReduceOp.Type op,
            DataType type,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        Reductions.checkReduce(op, type, dst, dstOffset, src, srcOffset, count);
        boolean arithmetic = op == ReduceOp.Type.SUM || op == ReduceOp.Type.PRODUCT;
        if (!arithmetic || !handles(type, count) || !src.isDirect() || !dst.isDirect()) {
            Reductions.reduce(op, type, dst, dstOffset, src, srcOffset, count);
            return;
        }
        try (NDManager scope = manager.newSubManager()) {
            NDArray a = wrap(scope, type, dst, dstOffset, count);
            NDArray b = wrap(scope, type, src, srcOffset, count);
            if (op == ReduceOp.Type.SUM) {
                a.addi(b);
            } else {
                a.muli(b);
            }
        }
    }

    /**
     * Does what {@link Reductions#scale} does, through libtorch when it can.
     *
     * @param type FLOAT32, FLOAT64, FLOAT16 or BFLOAT16
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param multiplier the factor
     * @throws IllegalArgumentException as {@link Reductions#scale} does
     */
    public void scale(DataType type, ByteBuffer buf, int offset, int count, double multiplier) {
        Reductions.checkScalable("scale", type, buf, offset, count);
        if (!handles(type, count) || !buf.isDirect()) {
            Reductions.scale(type, buf, offset, count, multiplier);
            return;
        }
        try (NDManager scope = manager.newSubManager()) {
            wrap(scope, type, buf, offset, count).muli(scalar(type, multiplier));
        }
    }

    /**
     * Does what {@link Reductions#divide} does, through libtorch when it can.
     *
     * @param type FLOAT32, FLOAT64, FLOAT16 or BFLOAT16
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param divisor the divisor
     * @throws IllegalArgumentException as {@link Reductions#divide} does
     */
    public void divide(DataType type, ByteBuffer buf, int offset, int count, double divisor) {
        Reductions.checkScalable("divide", type, buf, offset, count);
        if (!handles(type, count) || !buf.isDirect()) {
            Reductions.divide(type, buf, offset, count, divisor);
            return;
        }
        try (NDManager scope = manager.newSubManager()) {
            wrap(scope, type, buf, offset, count).divi(scalar(type, divisor));
        }
    }

    private boolean handles(DataType type, int count) {
        boolean wrappable =
                type == DataType.FLOAT32 || type == DataType.FLOAT64 || type == DataType.FLOAT16;
        int min = type == DataType.FLOAT16 ? minHalfBytes : minBytes;
        return wrappable
                && (long) count * type.getNumOfBytes() >= Math.max(1, min)
                // libtorch reads memory in the machine's order; the buffers hold little-endian.
                && ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    }

    // An exact slice: DJL would otherwise lower the caller's limit to the array's size.
    private static NDArray wrap(
            NDManager scope, DataType type, ByteBuffer buf, int offset, int count) {
        ByteBuffer slice = buf.slice(offset, count * type.getNumOfBytes());
        return scope.create(slice, new Shape(count), type);
    }

    // Float32 and float16 scale in float32 with the factor rounded to float, as Reductions does.
    private static Number scalar(DataType type, double factor) {
        return type == DataType.FLOAT64 ? (Number) factor : (Number) (float) factor;
    }
}
