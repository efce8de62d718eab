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

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.parallel.DataParallelBuilder;
import ai.djl.distributed.parallel.DataParallelConfig;
import ai.djl.distributed.parallel.DistributedSampler;
import ai.djl.distributed.parallel.ModelSync;
import ai.djl.distributed.parallel.RankAverages;
import ai.djl.distributed.parallel.RecordingParameterStore;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.training.GradientCollector;
import ai.djl.training.LocalParameterServer;
import ai.djl.training.Trainer;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.Pair;

import java.util.ArrayList;
import java.util.List;

/**
 * Data-parallel training across processes, as PyTorch's {@code DistributedDataParallel}: a DJL
 * {@link Trainer} whose {@link #step()} averages the gradients of every rank before the optimizer
 * runs. Existing training code keeps working, {@code EasyTrain.fit} and hand-written loops alike
 * ({@code forward}, {@code backward} in a {@code GradientCollector}, {@code step()}); create the
 * trainer with {@link #builder()} instead of {@code model.newTrainer(config)}, and give each rank
 * its share of the data with a {@link DistributedSampler}.
 *
 * <p><b>What it does.</b>
 *
 * <ul>
 *   <li>{@link #initialize} (or the first forward pass, evaluation or step, for a model whose
 *       parameters are already initialized or loaded) checks that every rank has the same
 *       parameters (names, shapes, types) and the same bucket limits, buffer broadcast,
 *       unused-parameter search and staged backward pass, and broadcasts their values, buffers
 *       included, from rank 0.
 *   <li>{@link #step()} packs the gradients into flat buckets ({@link BucketAssignment}: 25 MiB, a
 *       1 MiB first bucket, reverse definition order, rebuilt once after the first step from the
 *       order the parameters were used), reduces each bucket asynchronously in bucket order with
 *       the {@link CommHook} (default: all-reduce and average), and runs the optimizer on each
 *       bucket's parameters as soon as that bucket is reduced, reading the reduced buffer directly.
 *       Then, by default, it re-broadcasts the buffers (parameters without gradients that hold
 *       state, such as running statistics: types RUNNING_MEAN, RUNNING_VAR and OTHER) from rank 0,
 *       as PyTorch does before each forward pass. Frozen weights, biases, gammas and betas are
 *       synchronized once, with the rest; freezing or unfreezing a parameter after that fails the
 *       next step (with {@link Builder#optStagedBackward}, already its backward pass), naming the
 *       parameter and updating nothing, as in PyTorch.
 *   <li>Evaluators and the loss report averages over the ranks at each epoch's end ({@code
 *       onEpoch}), so DJL's training results and logs show the whole job; on ranks other than 0
 *       DJL's listeners that print or write (logging and its progress bar, model saving, timing,
 *       memory) are left out.
 * </ul>
 *
 * <p><b>Overlap.</b> DJL exposes no per-parameter autograd hooks, so by default no reduction can
 * start before {@code backward} returns: communication overlaps the packing of later buckets and
 * the optimizer work of earlier ones, not the backward pass. {@link Builder#optStagedBackward} runs
 * the backward pass stage by stage for a model with a staged form and starts each bucket's
 * reduction as soon as its gradients are final, as PyTorch's hooks do. With metrics set ({@code
 * setMetrics}), each synchronized step records {@code ddp-reduce-and-update} (its reduction and
 * optimizer work) and {@code ddp-wait} (the time it waited for reductions), in nanoseconds.
 *
 * <p><b>Collectives.</b> Every rank must make the same calls in the same order: {@code initialize}
 * (without it, the first forward pass, evaluation or step, which synchronizes the parameters), each
 * {@code step()} (the same number of them, which a {@link DistributedSampler} ensures), each
 * epoch's {@code onEpoch}, {@link #syncBuffers()} and {@link #averageAcrossRanks(double...)}.
 * Inside a {@link #noSync()} scope steps do not communicate at all.
 *
 * <p>One device per process. Not thread-safe, as DJL's trainer. Closing the trainer does not close
 * the process group.
 */
public final class DistributedDataParallel extends Trainer {

    private final ProcessGroup group;
    private final Optimizer optimizer;
    private final Device device;
    private final RecordingParameterStore store;
    private final DdpOptions options;

    private int noSyncDepth;
    private DdpLayout layout; // null until the parameters are synchronized
    private GradientSync sync; // null until the parameters are synchronized

    private DistributedDataParallel(
            Model model, DataParallelConfig config, ProcessGroup group, DdpOptions options) {
        super(model, config);
        this.group = group;
        this.optimizer = config.getOptimizer();
        this.device = config.getDevices()[0];
        this.options = options;
        store = new RecordingParameterStore(getManager());
        store.setParameterServer(new LocalParameterServer(optimizer), new Device[] {device});
    }

    /**
     * Returns a builder.
     *
     * @return a new builder
     */
    public static Builder builder() {
        return new Builder();
    }

    /**
     * Initializes the model's parameters, then synchronizes them from rank 0 ({@code
     * Trainer.initialize} plus DDP's construction-time broadcast). Every rank must call it.
     *
     * @param shapes the shapes of the inputs
     */
    @Override
    public void initialize(Shape... shapes) {
        Model model = getModel();
        model.getBlock().initialize(model.getNDManager(), model.getDataType(), shapes);
        synchronize();
    }

    /** {@inheritDoc} */
    @Override
    public NDList forward(NDList input) {
        synchronize();
        long begin = System.nanoTime();
        try {
            if (sync.isStaged()) {
                return sync.stagedForward(input);
            }
            return getModel().getBlock().forward(store, input, true);
        } finally {
            addMetric("forward", begin);
        }
    }

    /** {@inheritDoc} */
    @Override
    public NDList forward(NDList data, NDList labels) {
        synchronize();
        long begin = System.nanoTime();
        try {
            if (sync.isStaged()) {
                return sync.stagedForward(data);
            }
            return getModel().getBlock().forward(store, data, labels, null);
        } finally {
            addMetric("forward", begin);
        }
    }

    /**
     * Runs an inference forward pass. Unless {@link #initialize}, a forward pass or a step came
     * first, it first synchronizes the parameters from rank 0 as they do, so that every rank
     * evaluates rank 0's model (one loaded, or initialized without the trainer, included): every
     * rank must then call it.
     *
     * @param input the model's inputs
     * @return the outputs
     */
    @Override
    public NDList evaluate(NDList input) {
        synchronize();
        return getModel().getBlock().forward(store, input, false, null);
    }

    /**
     * Averages the gradients over the ranks and updates the parameters: DDP's reduction and the
     * optimizer step. Inside {@link #noSync()} (or with one rank) it only updates from this rank's
     * gradients. Every rank must call it as often as every other.
     *
     * @throws IllegalStateException after a staged backward pass ({@link
     *     Builder#optStagedBackward}) that failed part way, until {@code zeroGradients()} on a
     *     gradient collector of this trainer; or naming a parameter frozen or unfrozen since the
     *     parameters were synchronized, before anything is updated (a reduction a staged backward
     *     pass launched is dropped)
     */
    @Override
    public void step() {
        synchronize();
        sync.checkBackwardComplete();
        // Before any update, pending ones included: a step that fails changes no parameter.
        sync.checkTrainableUnchanged();
        // With a staged backward pass, finishing the pending updates is this step's reduction.
        long start = System.nanoTime();
        finishPendingUpdates();
        long begin = System.nanoTime();
        int[] useOrder = store.takeUseOrder();
        if (noSyncDepth > 0 || group.getSize() == 1) {
            sync.updateLocally(useOrder);
        } else if (sync.hasReducer()) {
            long from = sync.isStaged() ? start : begin;
            sync.reduceAndUpdate(useOrder);
            addMetric("ddp-reduce-and-update", from);
        }
        if (options.broadcastBuffers() && noSyncDepth == 0) {
            syncBuffers();
        }
        addMetric("step", begin);
    }

    /**
     * Starts a scope in which steps do not synchronize gradients (PyTorch's {@code no_sync()}).
     *
     * @return the scope; close it to resume synchronization
     */
    public NoSync noSync() {
        noSyncDepth++;
        return new NoSync(() -> noSyncDepth--);
    }

    /**
     * Completes the updates that {@link Builder#optOverlapWithForward} defers: waits for the
     * reductions still on the wire and runs the optimizer on their parameters. Steps, backward
     * passes through this trainer's gradient collectors, checkpoints, epoch ends and {@link
     * #close()} call it; call it before reading parameters directly after a step. Does nothing when
     * no update is pending.
     */
    public void finishPendingUpdates() {
        if (sync != null) {
            sync.finishPending();
        }
    }

    /**
     * Returns a gradient collector that first completes pending updates ({@link
     * #finishPendingUpdates()}) when {@link Builder#optOverlapWithForward} is on, so that no
     * deferred update lands after the gradients of the next backward pass.
     *
     * @return a new gradient collector
     */
    @Override
    public GradientCollector newGradientCollector() {
        synchronize();
        if (sync.isStaged()) {
            return new StagedCollector(this::stagedBackward, sync::zeroGradients);
        }
        GradientCollector collector = super.newGradientCollector();
        return options.overlapWithForward()
                ? new FinishingGradientCollector(collector, this::finishPendingUpdates)
                : collector;
    }

    /**
     * Returns whether steps synchronize gradients now.
     *
     * @return false inside a {@link #noSync()} scope
     */
    public boolean isSyncEnabled() {
        return noSyncDepth == 0;
    }

    /**
     * Broadcasts the buffers (parameters that take no gradient, such as running statistics) from
     * rank 0. Steps do it by default ({@link Builder#optBroadcastBuffers}). Every rank must call
     * it.
     */
    public void syncBuffers() {
        synchronize();
        List<NDArray> buffers = layout.bufferValues();
        if (!buffers.isEmpty()) {
            ModelSync.broadcast(group, buffers);
        }
    }

    /**
     * Averages values over the ranks, for reporting a hand-written loop's loss or metrics. Every
     * rank must call it with as many values.
     *
     * @param values this rank's values
     * @return the averages, on every rank
     */
    public double[] averageAcrossRanks(double... values) {
        if (group.getSize() == 1 || values.length == 0) {
            return values.clone();
        }
        try (NDManager m = getManager().newSubManager(group.getDefaultDevice())) {
            NDArray a = m.create(values);
            group.allReduce(a, ReduceOp.AVG);
            return a.toDoubleArray();
        }
    }

    /**
     * Returns the process group the gradients are averaged over.
     *
     * @return the group
     */
    public ProcessGroup getProcessGroup() {
        return group;
    }

    /**
     * Returns the current bucket assignment (indices into {@link #getParameterNames()}).
     *
     * @return the assignment, or null before the parameters are synchronized
     */
    public BucketAssignment getBucketAssignment() {
        return sync == null ? null : sync.getAssignment();
    }

    /**
     * Returns the names of the parameters whose gradients are averaged, in definition order.
     *
     * @return the names; empty before the parameters are synchronized
     */
    public List<String> getParameterNames() {
        return layout == null ? List.of() : layout.names();
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        try {
            finishPendingUpdates();
            store.sync();
        } finally {
            try {
                if (sync != null) {
                    // Waits for reductions still on the wire before freeing their buckets.
                    sync.close();
                }
            } finally {
                super.close();
            }
        }
    }

    /**
     * Runs the staged backward pass, launching each bucket's reduction as soon as its gradients are
     * final (outside {@link #noSync()}, with more than one rank).
     */
    private void stagedBackward(NDArray loss) {
        long begin = System.nanoTime();
        sync.stagedBackward(loss, noSyncDepth == 0 && group.getSize() > 1);
        addMetric("backward", begin);
    }

    boolean hasPendingUpdates() {
        return sync != null && sync.isPending();
    }

    Optimizer getOptimizer() {
        return optimizer;
    }

    Device getDevice() {
        return device;
    }

    /** Returns the array a parameter is trained as (its device copy when it lives elsewhere). */
    NDArray value(Parameter parameter) {
        return store.array(parameter, device);
    }

    /**
     * Checks that every rank has the same parameters and broadcasts them from rank 0, once; builds
     * the buckets.
     */
    void synchronize() {
        if (sync != null) {
            return;
        }
        layout = DdpLayout.synchronize(group, getModel().getBlock(), this::value, options);
        // The buckets live where the gradients are: the training device, which may not be the
        // model's (a model made on the CPU, trained on GPU LOCAL_RANK).
        NDManager onDevice =
                getManager().getDevice().equals(device)
                        ? getManager()
                        : getManager().newSubManager(device);
        sync =
                new GradientSync(
                        group,
                        layout,
                        options,
                        getModel().getBlock(),
                        store,
                        onDevice,
                        optimizer,
                        this::value,
                        this::recordWait);
    }

    /**
     * Returns every parameter with its name, in the block's definition order (a block used twice
     * lists its parameters under each of its names); synchronizes first.
     */
    List<Pair<String, Parameter>> namedParameters() {
        synchronize();
        finishPendingUpdates();
        List<Pair<String, Parameter>> all = new ArrayList<>();
        for (Pair<String, Parameter> pair : getModel().getBlock().getParameters()) {
            all.add(pair);
        }
        return all;
    }

    private void recordWait(long nanos) {
        if (getMetrics() != null) {
            getMetrics().addMetric("ddp-wait", nanos);
        }
    }

    /** Builds a {@link DistributedDataParallel}: {@code setX} values are required. */
    public static final class Builder extends DataParallelBuilder<Builder> {

        private CommHook hook = CommHooks.allReduce();
        private long bucketCapBytes = BucketAssignment.DEFAULT_BUCKET_CAP_BYTES;
        private long firstBucketBytes = BucketAssignment.DEFAULT_FIRST_BUCKET_BYTES;
        private boolean broadcastBuffers = true;
        private boolean findUnusedParameters;
        private boolean overlapWithForward;
        private boolean stagedBackward;

        Builder() {}

        /** {@inheritDoc} */
        @Override
        protected Builder self() {
            return this;
        }

        /**
         * Sets how buckets are reduced; default {@link CommHooks#allReduce()}.
         *
         * @param hook the hook
         * @return this builder
         */
        public Builder optCommHook(CommHook hook) {
            this.hook = hook;
            return this;
        }

        /**
         * Sets the size limit of buckets after the first (PyTorch's {@code bucket_cap_mb}); default
         * {@link BucketAssignment#DEFAULT_BUCKET_CAP_BYTES}.
         *
         * @param bytes the limit
         * @return this builder
         */
        public Builder optBucketCapBytes(long bytes) {
            this.bucketCapBytes = bytes;
            return this;
        }

        /**
         * Sets the size limit of the first bucket; default {@link
         * BucketAssignment#DEFAULT_FIRST_BUCKET_BYTES}.
         *
         * @param bytes the limit
         * @return this builder
         */
        public Builder optFirstBucketBytes(long bytes) {
            this.firstBucketBytes = bytes;
            return this;
        }

        /**
         * Sets whether each step re-broadcasts the buffers from rank 0; default true.
         *
         * @param broadcastBuffers whether to
         * @return this builder
         */
        public Builder optBroadcastBuffers(boolean broadcastBuffers) {
            this.broadcastBuffers = broadcastBuffers;
            return this;
        }

        /**
         * Sets whether parameters that no rank used in a step are found (one small all-reduce per
         * step) and left out of the optimizer's update, as PyTorch leaves their gradient unset;
         * default false, when they are updated with a zero gradient as DJL's trainer does. Steps
         * that do not communicate (one rank, or inside {@link #noSync()}) leave out those this rank
         * did not use. Buckets are then not rebuilt.
         *
         * @param find whether to find unused parameters
         * @return this builder
         */
        public Builder optFindUnusedParameters(boolean find) {
            this.findUnusedParameters = find;
            return this;
        }

        /**
         * Sets whether a step's reductions may still be on the wire when {@code step()} returns,
         * overlapping the next forward pass; default false. Each bucket's optimizer update then
         * runs when the forward pass first fetches one of its parameters (buckets are rebuilt in
         * the order the forward pass uses them), and every pending update completes before the next
         * backward pass, step, checkpoint or epoch end: the same updates, in the same values, as
         * without it. Parameters read directly (not through the trainer) after a step may be stale
         * until {@link DistributedDataParallel#finishPendingUpdates()}; backward passes must go
         * through the trainer's {@code newGradientCollector()}, as {@code EasyTrain} does.
         *
         * @param overlap whether to overlap reductions with the next forward pass
         * @return this builder
         */
        public Builder optOverlapWithForward(boolean overlap) {
            this.overlapWithForward = overlap;
            return this;
        }

        /**
         * Sets whether the backward pass runs stage by stage (for a model with a staged form: a
         * {@code StagedBlock} such as the GPT, or a {@code SequentialBlock}), each bucket's
         * reduction starting as soon as its gradients are final, while earlier stages are still in
         * backward, as PyTorch's DDP does with autograd hooks; default false. The gradients are
         * those of an ordinary backward pass, bit for bit. As in PyTorch, several backward passes
         * before one step (gradient accumulation) must run inside {@link #noSync()} but the last; a
         * second backward pass outside it fails. A backward pass that fails part way drops its
         * reductions (waiting for the buckets already sent); the gradients then hold part of it, so
         * the next forward pass and step fail until {@code zeroGradients()} on a gradient collector
         * of the trainer. Not with {@link #optOverlapWithForward} nor {@link
         * #optFindUnusedParameters}. A model without a staged form reduces after the backward pass,
         * as without this option (logged once).
         *
         * @param staged whether to overlap reductions with the backward pass
         * @return this builder
         */
        public Builder optStagedBackward(boolean staged) {
            this.stagedBackward = staged;
            return this;
        }

        /**
         * Builds the trainer.
         *
         * @return the trainer; every rank must build one
         * @throws IllegalArgumentException if a required value is missing or a limit is not
         *     positive
         */
        public DistributedDataParallel build() {
            Device d = prepare();
            DdpOptions options =
                    new DdpOptions(
                            hook,
                            firstBucketBytes,
                            bucketCapBytes,
                            broadcastBuffers,
                            findUnusedParameters,
                            overlapWithForward,
                            stagedBackward);
            options.validate();
            RankAverages averages = new RankAverages(group);
            return new DistributedDataParallel(
                    model,
                    new DataParallelConfig(
                            config,
                            d,
                            averages,
                            group.getRank(),
                            group.getSize(),
                            t -> ((DistributedDataParallel) t).finishPendingUpdates()),
                    group,
                    options);
        }
    }
}
