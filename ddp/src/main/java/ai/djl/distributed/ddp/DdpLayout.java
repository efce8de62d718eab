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

import ai.djl.distributed.parallel.ModelSync;
import ai.djl.distributed.parallel.Trainability;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;

/**
 * A DDP trainer's parameter layout, fixed when the parameters are first synchronized: the
 * parameters whose gradients are averaged (in definition order, the reducer's indices), the buffers
 * re-broadcast after steps, and the frozen parameters synchronized once. It checks that every rank
 * has the same layout, and that no parameter is frozen or unfrozen later. The arrays stay the
 * model's. Not thread-safe: the training thread uses it.
 */
final class DdpLayout {

    private static final Logger logger = LoggerFactory.getLogger(DistributedDataParallel.class);

    private final Parameter[] params;
    private final Parameter[] buffers;
    private final Parameter[] frozen;
    private final List<String> names;
    private final Trainability trainability; // what trained as the buckets were laid out
    private final Function<Parameter, NDArray> value;
    private boolean warnedUnused;

    private DdpLayout(
            ModelSync.Layout layout,
            Trainability trainability,
            Function<Parameter, NDArray> value) {
        this.params = layout.grads();
        this.buffers = layout.buffers();
        this.frozen = layout.frozen();
        this.names = layout.gradNames();
        this.trainability = trainability;
        this.value = value;
    }

    /**
     * Checks that every rank has the same parameters (names, shapes, types) and the same options
     * ({@link DdpOptions#signature()}), and broadcasts their values, buffers and frozen ones
     * included, from rank 0. Every rank must call it.
     *
     * @param group the group
     * @param block the model's block
     * @param value the array each parameter is trained as
     * @param options the trainer's options, which every rank must share too
     * @return the layout
     */
    static DdpLayout synchronize(
            ProcessGroup group,
            Block block,
            Function<Parameter, NDArray> value,
            DdpOptions options) {
        ModelSync.Layout layout = ModelSync.layout(block.getParameters(), value);
        ModelSync.verifyAcrossRanks(group, layout.signature() + options.signature());
        DdpLayout l = new DdpLayout(layout, Trainability.of(block.getParameters()), value);
        ModelSync.broadcast(group, l.values(l.params, l.buffers, l.frozen));
        return l;
    }

    /** Returns the parameters whose gradients are averaged, in reducer order. */
    Parameter[] params() {
        return params;
    }

    /** Returns the number of parameters whose gradients are averaged. */
    int size() {
        return params.length;
    }

    /** Returns the names of the parameters whose gradients are averaged. */
    List<String> names() {
        return names;
    }

    /** Returns the parameters' ids, in reducer order. */
    String[] ids() {
        String[] ids = new String[params.length];
        for (int i = 0; i < params.length; i++) {
            ids[i] = params[i].getId();
        }
        return ids;
    }

    /** Returns the shapes of the parameters' arrays, in reducer order. */
    Shape[] shapes() {
        Shape[] shapes = new Shape[params.length];
        for (int i = 0; i < params.length; i++) {
            shapes[i] = value.apply(params[i]).getShape();
        }
        return shapes;
    }

    /** Returns the types of the parameters' arrays, in reducer order. */
    DataType[] types() {
        DataType[] types = new DataType[params.length];
        for (int i = 0; i < params.length; i++) {
            types[i] = value.apply(params[i]).getDataType();
        }
        return types;
    }

    /** Returns the buffers' arrays, in order. */
    List<NDArray> bufferValues() {
        return values(buffers);
    }

    /**
     * Fails a step, or a staged backward pass, after a parameter was frozen or unfrozen since the
     * parameters were synchronized: the buckets, and what each rank sends, were laid out for the
     * earlier set (PyTorch's DDP has the same rule). Parameters are named as in {@code
     * block.getParameters()}.
     *
     * @throws IllegalStateException naming the first parameter frozen or unfrozen since
     */
    void checkTrainableUnchanged() {
        trainability.check(
                (name, frozen) ->
                        "parameter "
                                + name
                                + (frozen
                                        ? " was frozen after DDP laid out its buckets (expected:"
                                                + " freeze parameters before trainer.initialize"
                                                + " or the first step)"
                                        : " was unfrozen after DDP laid out its buckets"
                                                + " (expected: unfreeze parameters before"
                                                + " trainer.initialize or the first step)"));
    }

    /**
     * Returns which parameters this rank's forward passes used since the last step; warns once when
     * some went unused and they are not looked for.
     *
     * @param useOrder the parameters in the order of their first use; empty when nothing went
     *     through the trainer's forward pass
     * @param findUnusedParameters whether unused parameters are looked for
     * @param rank this rank, for the warning
     * @return one flag per parameter
     */
    boolean[] used(int[] useOrder, boolean findUnusedParameters, int rank) {
        boolean[] used = new boolean[params.length];
        if (useOrder.length == 0) {
            // Nothing went through this trainer's forward (the block was called directly): assume
            // every parameter took part.
            Arrays.fill(used, true);
            return used;
        }
        for (int p : useOrder) {
            used[p] = true;
        }
        if (!findUnusedParameters && !warnedUnused && useOrder.length < params.length) {
            warnedUnused = true;
            List<String> unused = new ArrayList<>();
            for (int p = 0; p < params.length; p++) {
                if (!used[p]) {
                    unused.add(names.get(p));
                }
            }
            logger.warn(
                    "DDP: rank {}: no gradient this step for {} (averaged as zeros, and updated as"
                            + " DJL updates them); if they are unused on purpose, set"
                            + " optFindUnusedParameters(true) so that parameters no rank used are not"
                            + " updated",
                    rank,
                    unused);
        }
        return used;
    }

    /** Returns the arrays of some parameters, in order. */
    private List<NDArray> values(Parameter[]... groups) {
        List<NDArray> arrays = new ArrayList<>();
        for (Parameter[] ps : groups) {
            for (Parameter p : ps) {
                arrays.add(value.apply(p));
            }
        }
        return arrays;
    }
}
