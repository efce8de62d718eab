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

import ai.djl.distributed.parallel.FlatBuffer;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.util.ArrayList;
import java.util.List;

/**
 * One of the {@link Reducer}'s gradient buckets: a flat buffer and the parameters laid out in it,
 * filled from their gradients before its reduction and handed on, parameter by parameter, after it.
 * Owns its buffer. Not thread-safe: the training thread fills and consumes it, and a reduction runs
 * on its buffer in between.
 */
final class ReducerBucket implements AutoCloseable {

    final int index;
    final boolean last;
    final int[] params;
    final long[] offsets;
    final long[] lengths;
    final FlatBuffer flat;
    final NDArray[] views;
    final List<String> paramNames;
    private final Shape[] shapes;
    private final DataType[] types;

    /**
     * Lays out a bucket.
     *
     * @param index the bucket's index, in reduction order
     * @param params the indices of its parameters
     * @param last whether it is the step's last bucket
     * @param names every parameter's name, by index
     * @param allShapes every parameter's shape, by index
     * @param allTypes every parameter's type, by index
     * @param manager the buffer's memory is attached to a sub-manager of it
     */
    ReducerBucket(
            int index,
            int[] params,
            boolean last,
            List<String> names,
            Shape[] allShapes,
            DataType[] allTypes,
            NDManager manager) {
        this.index = index;
        this.last = last;
        this.params = params;
        List<String> ns = new ArrayList<>(params.length);
        List<Shape> ss = new ArrayList<>(params.length);
        shapes = new Shape[params.length];
        types = new DataType[params.length];
        for (int i = 0; i < params.length; i++) {
            int p = params[i];
            ns.add(names.get(p));
            ss.add(allShapes[p]);
            shapes[i] = allShapes[p];
            types[i] = allTypes[p];
        }
        paramNames = List.copyOf(ns);
        flat =
                new FlatBuffer(
                        "gradient bucket " + index + " " + paramNames,
                        manager,
                        allTypes[params[0]],
                        ss);
        offsets = new long[params.length];
        lengths = new long[params.length];
        for (int i = 0; i < params.length; i++) {
            offsets[i] = flat.getOffset(i);
            lengths[i] = flat.getLength(i);
        }
        views = flat.views();
    }

    GradBucket view(NDManager step) {
        return new GradBucket(index, last, flat.getArray(), paramNames, offsets, lengths, step);
    }

    /** Whether every parameter of the bucket has its final gradient. */
    boolean isReady(boolean[] ready) {
        for (int p : params) {
            if (!ready[p]) {
                return false;
            }
        }
        return true;
    }

    /** Copies this rank's gradients in; parameters without one get zeros. */
    void fill(Reducer.GradientSource source) {
        for (int i = 0; i < params.length; i++) {
            int p = params[i];
            NDArray g = lengths[i] > 0 ? source.gradient(p) : null;
            if (g == null) {
                flat.zero(i);
                continue;
            }
            try {
                if (g.getDataType() != types[i] || g.size() != shapes[i].size()) {
                    throw new IllegalStateException(
                            "gradient of "
                                    + paramNames.get(i)
                                    + ": "
                                    + g.getDataType()
                                    + " "
                                    + g.getShape()
                                    + " (expected: "
                                    + types[i]
                                    + " "
                                    + shapes[i]
                                    + ")");
                }
                flat.pack(i, g);
            } finally {
                g.close();
            }
        }
    }

    /** Hands each parameter's averaged gradient on, skipping those no rank used. */
    void consume(NDArray result, float[] usedAnywhere, Reducer.Consumer consumer) {
        NDArray[] vs = result == flat.getArray() ? views : views(result);
        for (int i = 0; i < params.length; i++) {
            if (usedAnywhere == null || usedAnywhere[params[i]] > 0) {
                consumer.accept(params[i], vs[i]);
            }
        }
    }

    private NDArray[] views(NDArray result) {
        NDArray buffer = flat.getArray();
        if (result.getDataType() != buffer.getDataType() || result.size() != buffer.size()) {
            throw new IllegalStateException(
                    "comm hook result for bucket "
                            + index
                            + ": "
                            + result.getDataType()
                            + " "
                            + result.getShape()
                            + " (expected: "
                            + buffer.getDataType()
                            + " "
                            + buffer.getShape()
                            + ")");
        }
        return flat.views(result);
    }

    /** Frees the buffer. */
    @Override
    public void close() {
        flat.close();
    }
}
