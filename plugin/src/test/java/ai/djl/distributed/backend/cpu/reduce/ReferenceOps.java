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

import java.math.BigInteger;

/**
 * Reference arithmetic for one element, on raw little-endian bits held in a long, written without
 * the code under test: floats in double arithmetic, 16-bit floats through {@link HalfReference},
 * integers in long or {@link BigInteger} and then truncated.
 */
final class ReferenceOps {

    private ReferenceOps() {}

    /**
     * Returns {@code op(a, b)}.
     *
     * @param op SUM, PRODUCT, MIN, MAX, BAND, BOR or BXOR
     * @param type the type
     * @param a the left operand's bits
     * @param b the right operand's bits
     * @return the result's bits
     */
    static long apply(ReduceOp.Type op, DataType type, long a, long b) {
        switch (type) {
            case FLOAT32:
                double x = Float.intBitsToFloat((int) a);
                double y = Float.intBitsToFloat((int) b);
                return Float.floatToRawIntBits((float) floating(op, x, y)) & 0xFFFFFFFFL;
            case FLOAT64:
                double r = floating(op, Double.longBitsToDouble(a), Double.longBitsToDouble(b));
                return Double.doubleToRawLongBits(r);
            case FLOAT16:
                // Computed in float32: the double result is rounded to float, then to half.
                double h =
                        floating(
                                op,
                                HalfReference.halfValue((int) a),
                                HalfReference.halfValue((int) b));
                return HalfReference.toHalf((float) h);
            case BFLOAT16:
                double g =
                        floating(
                                op,
                                HalfReference.bfloatValue((int) a),
                                HalfReference.bfloatValue((int) b));
                return HalfReference.toBfloat((float) g);
            case BOOLEAN:
                return bool(op, a != 0, b != 0) ? 1 : 0;
            default:
                return integer(op, type, a, b);
        }
    }

    /**
     * Returns whether two results' bits agree: equal, or both NaN for floating types.
     *
     * @param type the type
     * @param expected the expected bits
     * @param actual the actual bits
     * @return whether they agree
     */
    static boolean same(DataType type, long expected, long actual) {
        if (expected == actual) {
            return true;
        }
        switch (type) {
            case FLOAT32:
                return Float.isNaN(Float.intBitsToFloat((int) expected))
                        && Float.isNaN(Float.intBitsToFloat((int) actual));
            case FLOAT64:
                return Double.isNaN(Double.longBitsToDouble(expected))
                        && Double.isNaN(Double.longBitsToDouble(actual));
            case FLOAT16:
            case BFLOAT16:
                boolean bfloat = type == DataType.BFLOAT16;
                return HalfReference.isNaN((int) expected, bfloat)
                        && HalfReference.isNaN((int) actual, bfloat);
            default:
                return false;
        }
    }

    /**
     * Returns the value of {@code a * m} or {@code a / m} as {@link Reductions#scale} and {@link
     * Reductions#divide} compute it: in float64 for FLOAT64, else in float32 with m as a float.
     *
     * @param type a floating type
     * @param a the element's bits
     * @param m the multiplier or divisor
     * @param divide whether to divide
     * @return the result's bits
     */
    static long scale(DataType type, long a, double m, boolean divide) {
        if (type == DataType.FLOAT64) {
            double x = Double.longBitsToDouble(a);
            return Double.doubleToRawLongBits(divide ? x / m : x * m);
        }
        double factor = (float) m;
        double x;
        if (type == DataType.FLOAT32) {
            x = Float.intBitsToFloat((int) a);
        } else if (type == DataType.FLOAT16) {
            x = HalfReference.halfValue((int) a);
        } else {
            x = HalfReference.bfloatValue((int) a);
        }
        // The double product of two floats is exact, and a double quotient rounded again to float
        // is the float quotient, so this is float32 arithmetic.
        float r = (float) (divide ? x / factor : x * factor);
        if (type == DataType.FLOAT32) {
            return Float.floatToRawIntBits(r) & 0xFFFFFFFFL;
        }
        return type == DataType.FLOAT16 ? HalfReference.toHalf(r) : HalfReference.toBfloat(r);
    }

    private static double floating(ReduceOp.Type op, double x, double y) {
        switch (op) {
            case SUM:
                return x + y;
            case PRODUCT:
                return x * y;
            case MIN:
            case MAX:
                if (Double.isNaN(x) || Double.isNaN(y)) {
                    return Double.NaN;
                }
                if (x == 0 && y == 0) {
                    // -0 orders below +0.
                    boolean negative = Double.doubleToRawLongBits(x) < 0;
                    boolean otherNegative = Double.doubleToRawLongBits(y) < 0;
                    boolean pickNegative =
                            op == ReduceOp.Type.MIN
                                    ? negative || otherNegative
                                    : negative && otherNegative;
                    return pickNegative ? -0.0 : 0.0;
                }
                return (op == ReduceOp.Type.MIN) == (x < y) ? x : y;
            default:
                throw new IllegalArgumentException(op.name());
        }
    }

    private static boolean bool(ReduceOp.Type op, boolean x, boolean y) {
        switch (op) {
            case SUM:
            case MAX:
            case BOR:
                return x || y;
            case PRODUCT:
            case MIN:
            case BAND:
                return x && y;
            case BXOR:
                return x != y;
            default:
                throw new IllegalArgumentException(op.name());
        }
    }

    private static long integer(ReduceOp.Type op, DataType type, long a, long b) {
        int bits = type.getNumOfBytes() * 8;
        long mask = bits == 64 ? -1L : (1L << bits) - 1;
        BigInteger x = value(type, a & mask);
        BigInteger y = value(type, b & mask);
        BigInteger r;
        switch (op) {
            case SUM:
                r = x.add(y);
                break;
            case PRODUCT:
                r = x.multiply(y);
                break;
            case MIN:
                r = x.min(y);
                break;
            case MAX:
                r = x.max(y);
                break;
            case BAND:
                r = x.and(y);
                break;
            case BOR:
                r = x.or(y);
                break;
            case BXOR:
                r = x.xor(y);
                break;
            default:
                throw new IllegalArgumentException(op.name());
        }
        // Two's complement wrap-around: keep the low bits.
        return r.longValue() & mask;
    }

    private static BigInteger value(DataType type, long raw) {
        if (type == DataType.UINT8) {
            return BigInteger.valueOf(raw);
        }
        int bits = type.getNumOfBytes() * 8;
        long signed = bits == 64 ? raw : raw << (64 - bits) >> (64 - bits);
        return BigInteger.valueOf(signed);
    }
}
