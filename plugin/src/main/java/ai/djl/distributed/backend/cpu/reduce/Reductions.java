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
import ai.djl.ndarray.types.DataType;

import java.nio.ByteBuffer;
import java.nio.ReadOnlyBufferException;
import java.util.Objects;

/**
 * Element-wise reductions over little-endian buffers: the arithmetic of the CPU backend's reducing
 * collectives, with PyTorch's semantics.
 *
 * <p>Supported types are FLOAT32, FLOAT64, FLOAT16, BFLOAT16, INT8, UINT8, INT32, INT64 and
 * BOOLEAN. Integer sums and products wrap around; UINT8 compares unsigned; float16 and bfloat16 are
 * computed in float32 and rounded to nearest-even; MIN and MAX give NaN if either operand is NaN
 * (as {@code torch.minimum} and {@code torch.maximum}) and order -0.0 below +0.0; booleans (one
 * byte, any non-zero byte is true, results are 0 or 1) take SUM and MAX as OR, PRODUCT and MIN as
 * AND.
 *
 * <p>Buffers may be direct or heap, in any {@link java.nio.ByteOrder} setting: elements are always
 * read and written little-endian, at absolute byte offsets, and positions, limits and orders are
 * left untouched. Elements must lie below the buffer's limit. The methods keep no state and are
 * thread-safe; each calling thread keeps about 28 KiB of block arrays.
 */
public final class Reductions {

    private static final String TYPES =
            "FLOAT32, FLOAT64, FLOAT16, BFLOAT16, INT8, UINT8, INT32, INT64 or BOOLEAN";
    private static final String FLOATING_OPS = "SUM, PRODUCT, MIN, MAX, AVG or PREMUL_SUM";
    private static final String INTEGER_OPS = "SUM, PRODUCT, MIN, MAX, BAND, BOR or BXOR";

    private Reductions() {}

    /**
     * Checks that an operation applies to a data type: bitwise operations do not apply to
     * floating-point types, AVG and PREMUL_SUM apply to nothing else.
     *
     * @param op the operation
     * @param type the elements' type
     * @throws IllegalArgumentException naming the operation and type if it does not apply, or if
     *     the type is not supported
     */
    public static void checkSupported(ReduceOp op, DataType type) {
        Objects.requireNonNull(op, "op");
        checkOp(op.getType(), op.toString(), type);
    }

    /**
     * Sets {@code dst[i] = op(dst[i], src[i])} for i in [0, count). AVG and PREMUL_SUM are reduced
     * as SUM, then finished with {@link #divide} or {@link #scale}.
     *
     * @param op SUM, PRODUCT, MIN, MAX, BAND, BOR or BXOR
     * @param type the elements' type
     * @param dst the destination, which also holds the left operands
     * @param dstOffset the byte offset of dst's first element
     * @param src the right operands; it may be dst itself if the two ranges do not overlap
     * @param srcOffset the byte offset of src's first element
     * @param count the number of elements
     * @throws IllegalArgumentException if op does not apply to type, if an offset or count is
     *     negative, if a range passes its buffer's limit, or if the ranges overlap in one buffer
     * @throws ReadOnlyBufferException if dst is read-only
     */
    public static void reduce(
            ReduceOp.Type op,
            DataType type,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        checkReduce(op, type, dst, dstOffset, src, srcOffset, count);
        if (count == 0) {
            return;
        }
        int size = type.getNumOfBytes();
        switch (type) {
            case FLOAT32:
                FloatKernels.reduceFloat32(op, dst, dstOffset, src, srcOffset, count);
                break;
            case FLOAT64:
                FloatKernels.reduceFloat64(op, dst, dstOffset, src, srcOffset, count);
                break;
            case FLOAT16:
            case BFLOAT16:
                HalfKernels.reduce(op, type, dst, dstOffset, src, srcOffset, count);
                break;
            case BOOLEAN:
                BitwiseKernels.reduce(op, true, dst, dstOffset, src, srcOffset, count);
                break;
            default:
                if (isBitwise(op)) {
                    BitwiseKernels.reduce(op, false, dst, dstOffset, src, srcOffset, count * size);
                } else {
                    reduceInteger(op, type, dst, dstOffset, src, srcOffset, count);
                }
                break;
        }
    }

    /**
     * Sets {@code buf[i] *= multiplier} for i in [0, count), as PREMUL_SUM's factor; the product is
     * computed in float64 for FLOAT64, else in float32 with the multiplier rounded to float32.
     *
     * @param type FLOAT32, FLOAT64, FLOAT16 or BFLOAT16
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param multiplier the factor
     * @throws IllegalArgumentException if the type is not floating-point, if offset or count is
     *     negative, or if the range passes the buffer's limit
     * @throws ReadOnlyBufferException if buf is read-only
     */
    public static void scale(
            DataType type, ByteBuffer buf, int offset, int count, double multiplier) {
        checkScalable("scale", type, buf, offset, count);
        switch (type) {
            case FLOAT32:
                FloatKernels.scaleFloat32(buf, offset, count, (float) multiplier);
                break;
            case FLOAT64:
                FloatKernels.scaleFloat64(buf, offset, count, multiplier);
                break;
            default:
                HalfKernels.scale(type, buf, offset, count, (float) multiplier, false);
                break;
        }
    }

    /**
     * Sets {@code buf[i] /= divisor} for i in [0, count), to finish AVG; the quotient is computed
     * in float64 for FLOAT64, else in float32 with the divisor rounded to float32.
     *
     * @param type FLOAT32, FLOAT64, FLOAT16 or BFLOAT16
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     * @param divisor the divisor, usually the group's size
     * @throws IllegalArgumentException if the type is not floating-point, if offset or count is
     *     negative, or if the range passes the buffer's limit
     * @throws ReadOnlyBufferException if buf is read-only
     */
    public static void divide(
            DataType type, ByteBuffer buf, int offset, int count, double divisor) {
        checkScalable("divide", type, buf, offset, count);
        switch (type) {
            case FLOAT32:
                FloatKernels.divideFloat32(buf, offset, count, (float) divisor);
                break;
            case FLOAT64:
                FloatKernels.divideFloat64(buf, offset, count, divisor);
                break;
            default:
                HalfKernels.scale(type, buf, offset, count, (float) divisor, true);
                break;
        }
    }

    /**
     * Checks {@link #reduce}'s arguments.
     *
     * @param op the operation
     * @param type the elements' type
     * @param dst the destination
     * @param dstOffset the byte offset of dst's first element
     * @param src the right operands
     * @param srcOffset the byte offset of src's first element
     * @param count the number of elements
     */
    static void checkReduce(
            ReduceOp.Type op,
            DataType type,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        Objects.requireNonNull(op, "op");
        if (op == ReduceOp.Type.AVG || op == ReduceOp.Type.PREMUL_SUM) {
            throw new IllegalArgumentException(
                    "op: "
                            + op
                            + " (expected: SUM, PRODUCT, MIN, MAX, BAND, BOR or BXOR; reduce "
                            + op
                            + " as SUM, then divide or scale)");
        }
        checkOp(op, op.name(), type);
        int size = type.getNumOfBytes();
        checkRange("dst", dst, dstOffset, count, size);
        checkRange("src", src, srcOffset, count, size);
        if (dst.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
        if (dst == src
                && count > 0
                && Math.abs((long) dstOffset - srcOffset) < (long) count * size) {
            throw new IllegalArgumentException(
                    "srcOffset: "
                            + srcOffset
                            + " (expected: src's "
                            + (long) count * size
                            + " bytes not to overlap dst's at "
                            + dstOffset
                            + " in the same buffer)");
        }
    }

    private static void reduceInteger(
            ReduceOp.Type op,
            DataType type,
            ByteBuffer dst,
            int dstOffset,
            ByteBuffer src,
            int srcOffset,
            int count) {
        switch (type) {
            case INT8:
            case UINT8:
                boolean unsigned = type == DataType.UINT8;
                IntegerKernels.reduceInt8(op, unsigned, dst, dstOffset, src, srcOffset, count);
                break;
            case INT32:
                IntegerKernels.reduceInt32(op, dst, dstOffset, src, srcOffset, count);
                break;
            case INT64:
                IntegerKernels.reduceInt64(op, dst, dstOffset, src, srcOffset, count);
                break;
            default:
                throw new AssertionError(type);
        }
    }

    private static void checkOp(ReduceOp.Type op, String opName, DataType type) {
        Objects.requireNonNull(type, "type");
        if (!isSupported(type)) {
            throw new IllegalArgumentException(
                    "type: " + type.name() + " (expected: " + TYPES + ")");
        }
        boolean averaging = op == ReduceOp.Type.AVG || op == ReduceOp.Type.PREMUL_SUM;
        if (type.isFloating() ? isBitwise(op) : averaging) {
            String ops = type.isFloating() ? FLOATING_OPS : INTEGER_OPS;
            throw new IllegalArgumentException(
                    "op: " + opName + " (expected: " + ops + " for " + type.name() + ")");
        }
    }

    /**
     * Checks {@link #scale}'s or {@link #divide}'s arguments.
     *
     * @param what "scale" or "divide", for the message
     * @param type the elements' type
     * @param buf the elements
     * @param offset the byte offset of the first element
     * @param count the number of elements
     */
    static void checkScalable(String what, DataType type, ByteBuffer buf, int offset, int count) {
        Objects.requireNonNull(type, "type");
        if (!isSupported(type) || !type.isFloating()) {
            throw new IllegalArgumentException(
                    "type: "
                            + type.name()
                            + " (expected: FLOAT32, FLOAT64, FLOAT16 or BFLOAT16 to "
                            + what
                            + ")");
        }
        checkRange("buf", buf, offset, count, type.getNumOfBytes());
        if (buf.isReadOnly()) {
            throw new ReadOnlyBufferException();
        }
    }

    private static void checkRange(String name, ByteBuffer buf, int offset, int count, int size) {
        Objects.requireNonNull(buf, name);
        if (count < 0) {
            throw new IllegalArgumentException("count: " + count + " (expected: >= 0)");
        }
        long end = offset + (long) count * size;
        if (offset < 0 || end > buf.limit()) {
            throw new IllegalArgumentException(
                    name
                            + "Offset: "
                            + offset
                            + " (expected: >= 0, with "
                            + count
                            + " elements of "
                            + size
                            + " bytes ending at "
                            + end
                            + " <= limit "
                            + buf.limit()
                            + ")");
        }
    }

    private static boolean isBitwise(ReduceOp.Type op) {
        return op == ReduceOp.Type.BAND || op == ReduceOp.Type.BOR || op == ReduceOp.Type.BXOR;
    }

    private static boolean isSupported(DataType type) {
        switch (type) {
            case FLOAT32:
            case FLOAT64:
            case FLOAT16:
            case BFLOAT16:
            case INT8:
            case UINT8:
            case INT32:
            case INT64:
            case BOOLEAN:
                return true;
            default:
                return false;
        }
    }
}
