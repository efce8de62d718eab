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

import ai.djl.distributed.parallel.InPlace;
import ai.djl.distributed.parallel.RecordingParameterStore;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.training.optimizer.Optimizer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.Function;
import java.util.function.LongConsumer;

/**
 * A DDP trainer's gradient synchronization once its parameters are laid out: the {@link Reducer}
 * over the {@link DdpLayout}'s parameters, the {@link StagedReductions} of a staged backward pass,
 * and the optimizer's updates that follow each bucket's reduction. {@link DistributedDataParallel}
 * decides when a step synchronizes; this class runs the step's reductions and updates. It owns the
 * reducer's buckets ({@link #close()} frees them); the parameters' arrays stay the model's. Not
 * thread-safe: the training thread drives it.
 */
final class GradientSync implements AutoCloseable {

    private static final Logger logger = LoggerFactory.getLogger(DistributedDataParallel.class);

    private final DdpLayout layout;
    private final Optimizer optimizer;
    private final Function<Parameter, NDArray> value;
    private final LongConsumer waits;
    private final boolean findUnusedParameters;
    private final boolean overlapWithForward;
    private final int rank;
    private final Reducer reducer; // null without parameters to reduce
    private final StagedReductions staged; // null unless the backward pass is staged
    private boolean rebuilt;

    /**
     * Sets up the reductions of a layout's parameters, and has the store complete a pending update
     * before a parameter is fetched.
     *
     * @param group the group gradients are averaged over
     * @param layout the parameters
     * @param options the trainer's options
     * @param block the model's block, for its staged form
     * @param store the trainer's parameter store
     * @param manager the trainer's manager, which the buckets' arrays live under
     * @param optimizer the optimizer
     * @param value the array each parameter is trained as
     * @param waits records the time spent waiting for reductions, in nanoseconds
     */
    GradientSync(
            ProcessGroup group,
            DdpLayout layout,
            DdpOptions options,
            Block block,
            RecordingParameterStore store,
            NDManager manager,
            Optimizer optimizer,
            Function<Parameter, NDArray> value,
            LongConsumer waits) {
        this.layout = layout;
        this.optimizer = optimizer;
        this.value = value;
        this.waits = waits;
        this.findUnusedParameters = options.findUnusedParameters();
        this.overlapWithForward = options.overlapWithForward();
        this.rank = group.getRank();
        store.track(layout.ids());
        staged = options.stagedBackward() ? stages(block, store, manager) : null;
        // Buckets keep their reverse definition order with a staged backward: about its order.
        rebuilt = staged != null;
        reducer =
                layout.size() == 0
                        ? null
                        : new Reducer(
                                group,
                                manager,
                                layout.names(),
                                layout.shapes(),
                                layout.types(),
                                options.hook(),
                                options.firstBucketBytes(),
                                options.bucketCapBytes());
        store.setBeforeUse(
                i -> {
                    if (reducer != null && reducer.isPending()) {
                        long waited = reducer.complete(i);
                        if (waited >= 0) {
                            waits.accept(waited);
                        }
                    }
                });
    }

    /** Returns the staged reductions, or logs why there are none. */
    private StagedReductions stages(Block block, RecordingParameterStore store, NDManager manager) {
        StagedReductions s = StagedReductions.of(block, layout.params(), store, manager);
        if (s == null) {
            logger.info(
                    "DDP: {} has no staged form (a StagedBlock or a SequentialBlock): reductions"
                            + " start after the backward pass",
                    block.getClass().getSimpleName());
        }
        return s;
    }

    /** Returns whether there is anything to reduce. */
    boolean hasReducer() {
        return reducer != null;
    }

    /** Returns whether the backward pass runs stage by stage. */
    boolean isStaged() {
        return staged != null;
    }

    /** Returns the current bucket assignment, or null without parameters to reduce. */
    BucketAssignment getAssignment() {
        return reducer == null ? null : reducer.getAssignment();
    }

    /** Returns whether reductions of the last step are still on the wire. */
    boolean isPending() {
        return reducer != null && reducer.isPending();
    }

    /** Waits for the reductions still on the wire and runs the optimizer on their parameters. */
    void finishPending() {
        if (isPending()) {
            try {
                waits.accept(reducer.completeAll());
            } catch (RuntimeException | Error e) {
                // completeAll ends the reduction even when it throws: what a staged backward pass
                // launched is over, and the next training pass is no second one before a step.
                if (staged != null) {
                    staged.takeLaunched();
                }
                throw e;
            }
        }
    }

    /**
     * Fails a step after a parameter was frozen or unfrozen since the layout, before anything is
     * updated: a reduction that a staged backward pass launched is dropped ({@link
     * Reducer#discard}, which waits for the buckets on the wire), so the failed step changes no
     * parameter, and the next step reduces the gradients afresh.
     *
     * @throws IllegalStateException naming the parameter frozen or unfrozen
     */
    void checkTrainableUnchanged() {
        try {
            layout.checkTrainableUnchanged();
        } catch (IllegalStateException e) {
            if (staged != null && staged.takeLaunched()) {
                reducer.discard();
            }
            throw e;
        }
    }

    /**
     * Runs a forward pass stage by stage.
     *
     * @param input the model's inputs
     * @return the outputs
     */
    NDList stagedForward(NDList input) {
        return staged.forward(input);
    }

    /**
     * Runs the staged backward pass, launching each bucket's reduction as soon as its gradients are
     * final when {@code sync}.
     *
     * @param loss the loss
     * @param sync whether this pass synchronizes (outside noSync, with more than one rank)
     * @throws IllegalStateException naming a parameter frozen or unfrozen since the layout, before
     *     the pass starts: the forward pass is dropped, the gradients are left as they were, and
     *     nothing is sent
     */
    void stagedBackward(NDArray loss, boolean sync) {
        try {
            // Before any reduction starts: the buckets, and what each rank sends, are laid out for
            // the parameters that took gradients when they were synchronized.
            layout.checkTrainableUnchanged();
        } catch (IllegalStateException e) {
            staged.abandon();
            throw e;
        }
        staged.backward(
                loss, sync && reducer != null ? reducer : null, this::gradientOf, this::update);
    }

    /**
     * Refuses a step after a staged backward pass that failed part way.
     *
     * @throws IllegalStateException if the last backward pass failed and the gradients were not
     *     zeroed since
     */
    void checkBackwardComplete() {
        if (staged != null) {
            staged.checkNotFailed();
        }
    }

    /**
     * Sets every parameter's gradient to zero, as DJL's {@code GradientCollector.zeroGradients}
     * does, and forgets a staged backward pass that failed part way. A reduction that a synced
     * backward pass launched whole is not undone: its buckets hold copies, and the step applies
     * them.
     */
    void zeroGradients() {
        for (Parameter p : layout.params()) {
            NDArray grad = ownGradient(value.apply(p));
            if (grad != null) {
                try (NDArray zeros = grad.zerosLike()) {
                    InPlace.copy(zeros, grad, p.getName() + " gradient");
                } finally {
                    grad.close();
                }
            }
        }
        if (staged != null) {
            staged.resetFailure();
        }
    }

    /**
     * Updates every parameter from this rank's own gradient: a step that does not synchronize. With
     * unused parameters looked for, those this rank's forward passes did not use are left out, as
     * PyTorch's optimizer skips a parameter whose gradient was never set.
     *
     * @param useOrder the parameters in the order the forward passes first used them
     */
    void updateLocally(int[] useOrder) {
        Parameter[] params = layout.params();
        boolean[] used = findUnusedParameters ? layout.used(useOrder, true, rank) : null;
        for (int p = 0; p < params.length; p++) {
            if (used != null && !used[p]) {
                continue;
            }
            NDArray weight = value.apply(params[p]);
            NDArray grad = ownGradient(weight);
            if (grad == null) {
                grad = weight.zerosLike();
            }
            try {
                optimizer.update(params[p].getId(), weight, grad);
            } finally {
                grad.close();
            }
        }
    }

    /**
     * Averages the gradients over the ranks and updates each bucket's parameters as its reduction
     * completes: a synchronized step, with a reducer. With updates overlapping the forward pass,
     * the reductions may still be on the wire on return.
     *
     * @param useOrder the parameters in the order the forward passes first used them
     */
    void reduceAndUpdate(int[] useOrder) {
        if (staged != null) {
            // The buckets were launched during the backward pass (and finishPending may have
            // completed them already); without a synced backward pass, reduce them now.
            if (!staged.takeLaunched()) {
                reducer.begin(this::gradientOf, null, false, this::update);
            }
            waits.accept(reducer.completeAll());
            return;
        }
        boolean[] used = layout.used(useOrder, findUnusedParameters, rank);
        // A parameter without a gradient this step contributes zeros of its type.
        Reducer.GradientSource source = this::gradientOf;
        Reducer.Consumer update = this::update;
        if (overlapWithForward && rebuilt) {
            // Updates follow each parameter's first use in the next forward pass.
            reducer.launch(source, used, findUnusedParameters, update);
            if (reducer.launchFailed()) {
                // Fail now, before this rank sends anything its peers do not expect.
                finishPending();
            }
        } else {
            waits.accept(reducer.reduce(source, used, findUnusedParameters, update));
            if (!rebuilt) {
                rebuilt = true;
                if (!findUnusedParameters) {
                    reducer.rebuild(readyOrder(useOrder));
                }
            }
        }
    }

    /** Waits for reductions still on the wire, then frees the buckets. Idempotent. */
    @Override
    public void close() {
        if (reducer != null) {
            reducer.close();
        }
    }

    /** A parameter's gradient for the reducer; one without a gradient contributes zeros. */
    private NDArray gradientOf(int p) {
        return ownGradient(value.apply(layout.params()[p]));
    }

    /** The optimizer's update of one parameter from its averaged gradient. */
    private void update(int p, NDArray grad) {
        Parameter param = layout.params()[p];
        optimizer.update(param.getId(), value.apply(param), grad);
    }

    /**
     * Returns the order to rebuild buckets in: gradients become ready in about the reverse of the
     * order parameters are first used; with updates overlapping the forward pass, buckets go in the
     * order the next forward pass needs them.
     */
    private int[] readyOrder(int[] useOrder) {
        if (overlapWithForward) {
            return useOrder;
        }
        int[] ready = new int[useOrder.length];
        for (int i = 0; i < ready.length; i++) {
            ready[i] = useOrder[useOrder.length - 1 - i];
        }
        return ready;
    }

    /**
     * Returns a parameter's gradient, or null when it got none: DJL then hands out float32 zeros
     * whatever the parameter's type, which is told apart here by its type (a float32 parameter's
     * zeros are its gradient either way).
     */
    private static NDArray ownGradient(NDArray weight) {
        NDArray grad = weight.getGradient();
        if (grad.getDataType() == weight.getDataType()) {
            return grad;
        }
        grad.close();
        return null;
    }
}
