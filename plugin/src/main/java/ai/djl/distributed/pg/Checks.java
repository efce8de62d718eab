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
import ai.djl.ndarray.types.Shape;

import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/** Argument checks at the process group's edge, with "name: value (expected: ...)" messages. */
final class Checks {

    /** The element types collectives accept. */
    static final Set<DataType> TYPES =
            EnumSet.of(
                    DataType.FLOAT32,
                    DataType.FLOAT64,
                    DataType.FLOAT16,
                    DataType.BFLOAT16,
                    DataType.INT8,
                    DataType.UINT8,
                    DataType.INT32,
                    DataType.INT64,
                    DataType.BOOLEAN);

    private Checks() {}

    static NDArray array(String name, NDArray array) {
        if (array == null) {
            throw new IllegalArgumentException(name + ": null (expected: an NDArray)");
        }
        // DJL keeps a closed array's type and shape on its Java object, so the checks below would
        // pass and the backend would fail mid-collective, aborting the group on every rank.
        if (array.isReleased()) {
            throw new IllegalArgumentException(name + ": a closed NDArray (expected: an open one)");
        }
        if (!TYPES.contains(array.getDataType())) {
            throw new IllegalArgumentException(
                    name
                            + ": data type "
                            + array.getDataType()
                            + " (expected: one of "
                            + TYPES
                            + ")");
        }
        long bytes = array.size() * array.getDataType().getNumOfBytes();
        if (bytes > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(
                    name
                            + ": "
                            + array.size()
                            + " elements of "
                            + array.getDataType()
                            + ", "
                            + bytes
                            + " bytes (expected: under 2 GiB)");
        }
        return array;
    }

    static void reduceOp(ReduceOp op, DataType type) {
        if (op == null) {
            throw new IllegalArgumentException("op: null (expected: a ReduceOp)");
        }
        boolean floating = type.isFloating();
        if (op.isBitwise() && floating) {
            throw new IllegalArgumentException(
                    "op: "
                            + op
                            + " on "
                            + type
                            + " (expected: an integer or boolean type for a bitwise op)");
        }
        ReduceOp.Type t = op.getType();
        if ((t == ReduceOp.Type.AVG || t == ReduceOp.Type.PREMUL_SUM) && !floating) {
            throw new IllegalArgumentException(
                    "op: " + op + " on " + type + " (expected: a floating-point type)");
        }
    }

    static void rank(String name, int rank, int size) {
        if (rank < 0 || rank >= size) {
            throw new IllegalArgumentException(
                    name + ": " + rank + " (expected: a group rank in [0, " + size + "))");
        }
    }

    static void peer(String name, int peer, int self, int size) {
        rank(name, peer, size);
        if (peer == self) {
            throw new IllegalArgumentException(
                    name + ": " + peer + " (expected: another rank than this one)");
        }
    }

    static void tag(int tag) {
        if (tag < 0) {
            throw new IllegalArgumentException("tag: " + tag + " (expected: >= 0)");
        }
    }

    static void like(String name, NDArray array, DataType type, Shape shape) {
        array(name, array);
        if (array.getDataType() != type || !array.getShape().equals(shape)) {
            throw new IllegalArgumentException(
                    name
                            + ": "
                            + array.getDataType()
                            + " "
                            + array.getShape()
                            + " (expected: "
                            + type
                            + " "
                            + shape
                            + ")");
        }
    }

    static void list(String name, List<NDArray> arrays, int size, DataType type, Shape shape) {
        if (arrays == null || arrays.size() != size) {
            throw new IllegalArgumentException(
                    name
                            + ": "
                            + (arrays == null ? "null" : arrays.size() + " arrays")
                            + " (expected: "
                            + size
                            + " arrays, one per rank)");
        }
        for (int i = 0; i < size; i++) {
            like(name + "[" + i + "]", arrays.get(i), type, shape);
        }
    }

    static void sameType(String name, List<NDArray> arrays) {
        if (arrays == null || arrays.isEmpty()) {
            throw new IllegalArgumentException(
                    name
                            + ": "
                            + (arrays == null ? "null" : "empty")
                            + " (expected: at least one array)");
        }
        DataType type = array(name + "[0]", arrays.get(0)).getDataType();
        for (int i = 1; i < arrays.size(); i++) {
            if (array(name + "[" + i + "]", arrays.get(i)).getDataType() != type) {
                throw new IllegalArgumentException(
                        name
                                + "["
                                + i
                                + "]: "
                                + arrays.get(i).getDataType()
                                + " (expected: "
                                + type
                                + ", like "
                                + name
                                + "[0])");
            }
        }
    }

    static void elements(String name, NDArray array, long expected) {
        if (array.size() != expected) {
            throw new IllegalArgumentException(
                    name + ": " + array.size() + " elements (expected: " + expected + ")");
        }
    }

    /** Returns the elements in one row (along the first dimension) of an array. */
    static long rowElements(NDArray array) {
        Shape shape = array.getShape();
        return shape.isScalar() ? 1 : shape.slice(1).size();
    }

    static long[] splits(String name, long[] splits, NDArray array, int size) {
        long rows = array.getShape().isScalar() ? 1 : array.getShape().get(0);
        if (splits == null) {
            if (rows % size != 0) {
                throw new IllegalArgumentException(
                        name + ": " + rows + " rows (expected: a multiple of " + size + ")");
            }
            long[] even = new long[size];
            java.util.Arrays.fill(even, rows / size);
            return even;
        }
        long sum = 0;
        for (long s : splits) {
            if (s < 0) {
                throw new IllegalArgumentException(name + " splits: " + s + " (expected: >= 0)");
            }
            sum += s;
        }
        if (splits.length != size || sum != rows) {
            throw new IllegalArgumentException(
                    name
                            + " splits: "
                            + java.util.Arrays.toString(splits)
                            + " (expected: "
                            + size
                            + " sizes summing to "
                            + rows
                            + " rows)");
        }
        return splits.clone();
    }
}
