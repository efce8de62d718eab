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
package ai.djl.distributed.backend.nccl;

import ai.djl.distributed.NotSupportedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.types.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

/**
 * PyTorch's rules ({@code ProcessGroupNCCL}) for turning a reduction on a data type into NCCL's op
 * and type: booleans travel as {@code ncclUint8}, and their SUM is NCCL's MAX (both are OR; a sum
 * could overflow the byte); AVG on booleans is refused; the bitwise ops are refused, naming the
 * backend; PREMUL_SUM's factor is handed to {@code ncclRedOpCreatePreMulSum} at the type's width,
 * since NCCL reads as many bytes as an element has (float16 bits for float16, bfloat16 bits for
 * bfloat16, a float for float32, a double for float64, the integer for integer types). Stateless.
 */
public final class NcclOps {

    /** The backend's name, as errors show it. */
    public static final String BACKEND = "nccl";

    private static final Map<DataType, NcclDataType> TYPES = new EnumMap<>(DataType.class);

    static {
        TYPES.put(DataType.INT8, NcclDataType.INT8);
        TYPES.put(DataType.UINT8, NcclDataType.UINT8);
        TYPES.put(DataType.BOOLEAN, NcclDataType.UINT8);
        TYPES.put(DataType.INT32, NcclDataType.INT32);
        TYPES.put(DataType.UINT32, NcclDataType.UINT32);
        TYPES.put(DataType.INT64, NcclDataType.INT64);
        TYPES.put(DataType.UINT64, NcclDataType.UINT64);
        TYPES.put(DataType.FLOAT16, NcclDataType.FLOAT16);
        TYPES.put(DataType.BFLOAT16, NcclDataType.BFLOAT16);
        TYPES.put(DataType.FLOAT32, NcclDataType.FLOAT32);
        TYPES.put(DataType.FLOAT64, NcclDataType.FLOAT64);
    }

    /**
     * A reduction as NCCL takes it.
     *
     * @param op the built-in op, or null for PREMUL_SUM (created per communicator from the scalar)
     * @param type the element type
     * @param scalar PREMUL_SUM's factor at the type's width (little-endian), else null
     */
    public record Reduction(NcclRedOp op, NcclDataType type, byte[] scalar) {}

    private NcclOps() {}

    /**
     * Returns whether NCCL carries a data type.
     *
     * @param type a DJL type
     * @return whether it has an NCCL type
     */
    public static boolean supports(DataType type) {
        return TYPES.containsKey(type);
    }

    /**
     * Returns the types NCCL carries.
     *
     * @return DJL's types, in DJL's order
     */
    public static List<DataType> supportedTypes() {
        return List.copyOf(TYPES.keySet());
    }

    /**
     * Returns NCCL's type of a DJL type.
     *
     * @param type a DJL type
     * @return NCCL's type (booleans as {@code ncclUint8})
     * @throws IllegalArgumentException naming the type and those NCCL takes
     */
    public static NcclDataType dataType(DataType type) {
        NcclDataType t = TYPES.get(type);
        if (t == null) {
            throw new IllegalArgumentException(
                    "data type: "
                            + type
                            + " (expected for "
                            + BACKEND
                            + ": one of "
                            + supportedTypes()
                            + ")");
        }
        return t;
    }

    /**
     * Maps a reduction on a data type.
     *
     * @param op the reduction
     * @param type the arrays' type
     * @return NCCL's op, type and scalar
     * @throws NotSupportedException for the bitwise ops, naming the backend
     * @throws IllegalArgumentException for AVG or PREMUL_SUM on booleans, or a type NCCL lacks
     */
    public static Reduction reduction(ReduceOp op, DataType type) {
        if (op.isBitwise()) {
            throw new NotSupportedException(BACKEND, "ReduceOp." + op + " (as PyTorch's NCCL)");
        }
        NcclDataType t = dataType(type);
        boolean bool = type == DataType.BOOLEAN;
        switch (op.getType()) {
            case SUM:
                // Booleans ride on uint8: a sum could wrap at 256 ranks; MAX is the same OR.
                return new Reduction(bool ? NcclRedOp.MAX : NcclRedOp.SUM, t, null);
            case PRODUCT:
                return new Reduction(NcclRedOp.PROD, t, null);
            case MIN:
                return new Reduction(NcclRedOp.MIN, t, null);
            case MAX:
                return new Reduction(NcclRedOp.MAX, t, null);
            case AVG:
                if (bool) {
                    throw new IllegalArgumentException(
                            "ReduceOp.AVG on " + type + " (expected: a numeric type)");
                }
                return new Reduction(NcclRedOp.AVG, t, null);
            case PREMUL_SUM:
                if (bool) {
                    throw new IllegalArgumentException(
                            op + " on " + type + " (expected: a numeric type)");
                }
                return new Reduction(null, t, scalarBytes(op.getFactor(), t));
            default:
                throw new NotSupportedException(BACKEND, "ReduceOp." + op);
        }
    }

    /**
     * Encodes a PREMUL_SUM factor as one element of a type, as {@code T(factor)} would in C++:
     * rounded to nearest-even for float16, bfloat16 and float32, truncated toward zero for
     * integers.
     *
     * @param factor the factor
     * @param type the element type
     * @return {@code type.width()} bytes, little-endian
     */
    public static byte[] scalarBytes(double factor, NcclDataType type) {
        ByteBuffer b = ByteBuffer.allocate(type.width()).order(ByteOrder.LITTLE_ENDIAN);
        switch (type) {
            case FLOAT16:
                b.putShort(float16Bits((float) factor));
                break;
            case BFLOAT16:
                b.putShort(bfloat16Bits((float) factor));
                break;
            case FLOAT32:
                b.putFloat((float) factor);
                break;
            case FLOAT64:
                b.putDouble(factor);
                break;
            case INT8:
            case UINT8:
                b.put((byte) (long) factor);
                break;
            case INT32:
            case UINT32:
                b.putInt((int) (long) factor);
                break;
            case INT64:
            case UINT64:
                b.putLong((long) factor);
                break;
            default:
                throw new IllegalArgumentException("type: " + type + " (expected: an NCCL type)");
        }
        return b.array();
    }

    /**
     * Returns a float's IEEE half-precision bits, rounded to nearest-even (overflow to infinity).
     *
     * @param f the value
     * @return the float16 bits
     */
    public static short float16Bits(float f) {
        int bits = Float.floatToRawIntBits(f);
        int sign = (bits >>> 16) & 0x8000;
        int exp = (bits >>> 23) & 0xff;
        int mant = bits & 0x7fffff;
        if (exp == 0xff) {
            return (short) (sign | 0x7c00 | (mant != 0 ? 0x200 : 0)); // infinity or a quiet NaN
        }
        int e = exp - 127 + 15;
        if (e >= 0x1f) {
            return (short) (sign | 0x7c00);
        }
        if (e <= 0) {
            // A half subnormal (or zero): the implicit bit joins the mantissa, shifted down.
            if (e < -10) {
                return (short) sign;
            }
            int full = mant | 0x800000;
            int shift = 14 - e;
            return (short) (sign | roundShift(full, shift));
        }
        // A carry out of the mantissa moves into the exponent, as it should (up to infinity).
        return (short) (sign | ((e << 10) + roundShift(mant, 13)));
    }

    /**
     * Returns a float's bfloat16 bits, rounded to nearest-even (PyTorch's {@code
     * round_to_nearest_even}); NaN stays a quiet NaN.
     *
     * @param f the value
     * @return the bfloat16 bits
     */
    public static short bfloat16Bits(float f) {
        int bits = Float.floatToRawIntBits(f);
        if (Float.isNaN(f)) {
            return (short) ((bits >>> 16) | 0x40);
        }
        int bias = 0x7fff + ((bits >>> 16) & 1);
        return (short) ((bits + bias) >>> 16);
    }

    /** {@code value >> shift}, rounded to nearest-even on the bits shifted out. */
    private static int roundShift(int value, int shift) {
        int kept = value >>> shift;
        int rest = value & ((1 << shift) - 1);
        int half = 1 << (shift - 1);
        return rest > half || (rest == half && (kept & 1) != 0) ? kept + 1 : kept;
    }
}
