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
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.util.function.IntToDoubleFunction;

/**
 * Rank-dependent inputs and closed-form expectations for the collective suite. Values are small
 * integers, exact in every data type, so results compare exactly; integer results wrap as the type
 * does, computed here with plain long arithmetic.
 */
final class Expect {

    private Expect() {}

    /** An input value for rank r, element i, suited to op (see the class comment). */
    static double input(ReduceOp.Type op, DataType type, int r, int i) {
        if (type == DataType.BOOLEAN) {
            return (i + r) % 2;
        }
        switch (op) {
            case PRODUCT:
                return 1 + ((i + r) % 2);
            case MIN:
            case MAX:
                return type == DataType.UINT8 ? (i * 7 + r * 3) % 11 : (i * 7 + r * 3) % 11 - 5;
            case BAND:
            case BOR:
            case BXOR:
                return (i * 13 + r * 29) & 0x7F;
            default:
                return (r + 1) * ((i % 5) + 1);
        }
    }

    /** The reduction of every rank's input at element i. */
    static double reduced(ReduceOp op, DataType type, int size, int i) {
        ReduceOp.Type t = op.getType();
        long acc = (long) input(t, type, 0, i);
        double sum = 0;
        for (int r = 0; r < size; r++) {
            long v = (long) input(t, type, r, i);
            sum += v;
            if (r == 0) {
                continue;
            }
            acc = combine(t, type, acc, v);
        }
        switch (t) {
            case AVG:
                return sum / size;
            case PREMUL_SUM:
                return sum * op.getFactor();
            default:
                return wrap(type, acc);
        }
    }

    private static long combine(ReduceOp.Type t, DataType type, long a, long b) {
        if (type == DataType.BOOLEAN) {
            switch (t) {
                case SUM:
                case MAX:
                case BOR:
                    return a | b;
                case BXOR:
                    return a ^ b;
                default:
                    return a & b;
            }
        }
        switch (t) {
            case PRODUCT:
                return a * b;
            case MIN:
                return Math.min(a, b);
            case MAX:
                return Math.max(a, b);
            case BAND:
                return a & b;
            case BOR:
                return a | b;
            case BXOR:
                return a ^ b;
            default:
                return a + b;
        }
    }

    static double wrap(DataType type, long v) {
        switch (type) {
            case INT8:
                return (byte) v;
            case UINT8:
                return v & 0xFF;
            case INT32:
                return (int) v;
            default:
                return v;
        }
    }

    /** An array of n elements of type, element i being f(i). */
    static NDArray array(NDManager m, DataType type, int n, IntToDoubleFunction f) {
        double[] d = new double[n];
        for (int i = 0; i < n; i++) {
            d[i] = f.applyAsDouble(i);
        }
        NDArray a = m.create(d, new Shape(n));
        return type == DataType.FLOAT64 ? a : a.toType(type, false);
    }

    /** The elements of a as doubles. */
    static double[] values(NDArray a) {
        if (a.size() == 0) {
            return new double[0];
        }
        return a.toType(DataType.FLOAT64, false).toDoubleArray();
    }

    /** The expected doubles f(i) for i in [0, n). */
    static double[] expected(int n, IntToDoubleFunction f) {
        double[] d = new double[n];
        for (int i = 0; i < n; i++) {
            d[i] = f.applyAsDouble(i);
        }
        return d;
    }
}
