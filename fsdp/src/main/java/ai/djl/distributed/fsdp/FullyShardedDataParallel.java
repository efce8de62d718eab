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
package ai.djl.distributed.fsdp;

import ai.djl.Device;
import ai.djl.Model;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.parallel.DataParallelBuilder;
import ai.djl.distributed.parallel.DataParallelConfig;
import ai.djl.distributed.parallel.DistributedSampler;
import ai.djl.distributed.parallel.ModelSync;
import ai.djl.distributed.parallel.OptimizerState;
import ai.djl.distributed.parallel.RankAverages;
import ai.djl.distributed.parallel.Trainability;
import ai.djl.distributed.pg.DeviceMesh;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.staged.Stage;
import ai.djl.distributed.staged.Stages;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.training.GradientCollector;
import ai.djl.training.Trainer;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.util.RandomUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.UUID;
import java.util.function.BiConsumer;

/**
 * Fully sharded data parallelism, as PyTorch's {@code FullyShardedDataParallel}: a DJL {@link
 * Trainer} whose ranks each hold only a shard of every parameter, of its gradient and of the
 * optimizer's state, so that a model too large for one process trains across several. {@code
 * EasyTrain.fit} and hand-written loops ({@code forward}, {@code backward} in the trainer's
 * gradient collector, {@code step()}) work unchanged; create the trainer with {@link #builder()}
 * and give each rank its share of the data with a {@link DistributedSampler}.
 *
 * <p><b>Units.</b> A {@link WrapPolicy} groups the model's {@linkplain Stages stages} into units;
 * each unit's parameters are flattened, padded to a multiple of the shard group's size and split
 * evenly, each rank keeping one range. What no unit claims belongs to the root unit, and so does
 * every parameter used by stages of different units: the GPT's token embedding, tied to its
 * language-model head, lives in the root unit, which stays gathered from the start of the forward
 * pass to the end of the backward pass, so both uses add their gradients into one array before it
 * is reduced.
 *
 * <p><b>A step.</b> The forward pass runs stage by stage: a unit is gathered ({@code
 * allGatherIntoTensor}) before its first stage, the next stage's units are gathered while the
 * current stage computes, and with {@link ShardingStrategy#FULL_SHARD} a unit is freed after its
 * last stage and the backward pass recomputes each stage from its stored input. The backward pass
 * ({@link #newGradientCollector()}'s {@code backward}) runs segment by segment from the last stage;
 * as soon as a unit's first stage is done its gradients are reduce-scattered, asynchronously, onto
 * the shards. {@link #step()} clips the gradient's global norm (optional) and runs the optimizer on
 * each unit's shard. Several backward passes before a step accumulate gradients. A model with no
 * staged form (neither a {@code StagedBlock} nor a {@code SequentialBlock}) is one stage: every
 * unit is gathered for the whole step, sharded at rest only (logged once).
 *
 * <p><b>At rest</b> each parameter's array ({@link Parameter#getArray()}) is the part of it this
 * rank holds, one-dimensional and maybe empty; {@code Model.save} would therefore write shards:
 * save with {@link FsdpCheckpoint} instead. Which parameters train is fixed when the model is
 * sharded: freezing or unfreezing one after that makes the next backward pass or step throw an
 * {@link IllegalStateException} naming it.
 *
 * <p><b>After {@link #close()}</b> the model keeps what this rank held: each sharded parameter's
 * array is a copy of this rank's part of it, one-dimensional and owned by the model's manager
 * (where the shard group has one rank, as under {@link ShardingStrategy#NO_SHARD}, every parameter
 * whole and in its own shape, so the model runs as a plain one). Closing runs no collective. To
 * keep the full model, write it before closing, with {@link FsdpCheckpoint#saveFull}.
 *
 * <p><b>Collectives.</b> Every rank must make the same calls in the same order: {@code initialize}
 * (or the first forward pass), every forward pass, backward pass and step. Every unit is gathered
 * and reduced in every pass, in the same order, whatever the forward pass uses, so ranks whose
 * forward passes differ do not hang each other. fp32 parameters only; other types are refused. One
 * device per process. Not thread-safe, as DJL's trainer. Closing the trainer does not close the
 * process group. Trainers may share one optimizer (one {@code TrainingConfig}): each keys its state
 * by its own prefix, and drops it from the optimizer when it closes.
 */
public final class FullyShardedDataParallel extends Trainer {

    private static final Logger logger = LoggerFactory.getLogger(FullyShardedDataParallel.class);

    private final ProcessGroup group;
    private final ProcessGroup shardGroup;
    private final ProcessGroup replicaGroup;
    private final ShardingStrategy strategy;
    private final WrapPolicy policy;
    private final double maxGradNorm;
    private final Optimizer optimizer;
    private final ShardedParameterStore store;
    private final BufferPool pool;
    private final long seedBase;
    private final long slice;
    private final boolean checkpointing;
    private final String optimizerPrefix;

    private List<FlatUnit> units;
    private UnitLayout layout;
    private Trainability trainability;
    private StagedStep staged;
    private boolean staging;
    private boolean partialGradients;
    private int openCollectors;
    private boolean closed;

    private FullyShardedDataParallel(Model model, DataParallelConfig config, Builder b) {
        super(model, config);
        this.group = b.processGroup();
        this.strategy = b.strategy;
        this.policy = b.policy;
        this.maxGradNorm = b.maxGradNorm;
        this.optimizer = config.getOptimizer();
        switch (strategy) {
            case NO_SHARD:
                shardGroup = null;
                replicaGroup = group;
                break;
            case HYBRID_SHARD:
                shardGroup = b.mesh.getGroup(1);
                replicaGroup = b.mesh.getGroup(0);
                break;
            default:
                shardGroup = group;
                replicaGroup = null;
        }
        store = new ShardedParameterStore(getManager());
        pool = new BufferPool(getManager());
        if (b.heapThreshold > 0 && strategy != ShardingStrategy.NO_SHARD) {
            HeapPolicy.returnBlocksFrom(b.heapThreshold);
        }
        seedBase = RandomUtils.RANDOM.nextLong();
        slice = b.slice;
        checkpointing = b.checkpointing;
        // Random, as DJL's parameter ids are: unique to this trainer, whoever shares its optimizer.
        optimizerPrefix = "fsdp-" + UUID.randomUUID() + "/";
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
     * Initializes the model's parameters, then shards them: every rank checks that it has the same
     * parameters and units as every other, takes rank 0's values and keeps its shard. A collective.
     *
     * @param shapes the shapes of the inputs
     */
    @Override
    public void initialize(Shape... shapes) {
        Model model = getModel();
        model.getBlock().initialize(model.getNDManager(), model.getDataType(), shapes);
        shard();
    }

    /** {@inheritDoc} */
    @Override
    public NDList forward(NDList input) {
        shard();
        long begin = System.nanoTime();
        try {
            return staged.forward(input, openCollectors > 0);
        } finally {
            addMetric("forward", begin);
        }
    }

    /** {@inheritDoc} */
    @Override
    public NDList forward(NDList data, NDList labels) {
        return forward(data);
    }

    /**
     * Runs an inference forward pass, each unit gathered for its stages and freed after them.
     *
     * @param input the model's inputs
     * @return the outputs
     * @throws IllegalStateException if a training forward pass run inside a gradient collector has
     *     not been backpropagated yet (evaluate after the backward, as a plain trainer's loop does)
     */
    @Override
    public NDList evaluate(NDList input) {
        shard();
        return staged.evaluate(input, false);
    }

    /**
     * Returns a gradient collector whose {@code backward} runs FSDP's staged backward pass.
     *
     * @return a new gradient collector; close it after the backward pass
     */
    @Override
    public GradientCollector newGradientCollector() {
        ++openCollectors;
        return new FsdpGradientCollector(this);
    }

    /**
     * Clips the gradient's global norm (if set), runs the optimizer on every unit's shard and sets
     * the gradients to zero. Every rank must call it as often as every other (the norm is a
     * collective).
     *
     * @throws IllegalStateException if a parameter was frozen or unfrozen since the model was
     *     sharded, naming it
     */
    @Override
    public void step() {
        shard();
        checkTrainability("step");
        if (partialGradients) {
            throw new IllegalStateException(
                    "step: the last backward pass failed part way, and the gradients hold part of"
                            + " it (expected: zeroGradients() on the gradient collector before the"
                            + " next step)");
        }
        long begin = System.nanoTime();
        staged.abandon();
        for (FlatUnit u : units) {
            u.finishReductions();
        }
        if (maxGradNorm > 0) {
            clipGradNorm();
        }
        for (FlatUnit u : units) {
            u.update(optimizer, optimizerIds(u));
            u.zeroGradient();
        }
        addMetric("step", begin);
    }

    /**
     * Returns the global norm of the gradients accumulated since the last step (all ranks' shards
     * together). A collective over the shard group.
     *
     * @return the 2-norm
     */
    public double gradientNorm() {
        shard();
        // Summed where the gradients are, and read once: one host synchronisation on a GPU.
        try (NDManager m = getManager().newSubManager()) {
            NDArray total = m.zeros(new Shape(1), DataType.FLOAT64);
            for (FlatUnit u : units) {
                // Every temporary closed: they belong to the shard's long-lived manager.
                try (NDArray wide = u.gradient().toType(DataType.FLOAT64, true);
                        NDArray sq = wide.square();
                        NDArray sum = sq.sum()) {
                    total.addi(sum);
                }
            }
            if (shardGroup != null && shardGroup.getSize() > 1) {
                shardGroup.allReduce(total, ReduceOp.SUM);
            }
            return Math.sqrt(total.getDouble(0));
        }
    }

    private void clipGradNorm() {
        double norm = gradientNorm();
        // PyTorch's clip_grad_norm_: scale by max / (norm + 1e-6), never up.
        double coef = maxGradNorm / (norm + 1e-6);
        if (coef < 1) {
            for (FlatUnit u : units) {
                u.gradient().muli((float) coef);
            }
        }
    }

    // Units, and what each rank shards and updates, are laid out for what trained at sharding.
    private void checkTrainability(String call) {
        trainability.check(
                (name, frozen) ->
                        call
                                + ": parameter "
                                + name
                                + " was "
                                + (frozen ? "frozen" : "unfrozen")
                                + " after FSDP sharded the model (expected: "
                                + (frozen ? "freeze" : "unfreeze")
                                + " parameters before trainer.initialize or the first forward"
                                + " pass, or "
                                + (frozen ? "unfreeze" : "freeze")
                                + " it again; the units, what each rank shards and updates, are"
                                + " laid out for what trained then)");
    }

    void backward(NDArray loss) {
        shard();
        // Before the pass: a refused one has reduced nothing onto the shards.
        checkTrainability("backward");
        long begin = System.nanoTime();
        try {
            staged.backward(loss);
        } catch (RuntimeException | Error e) {
            // Units reduced before the failure added their part to the shards' gradients.
            partialGradients = true;
            throw e;
        }
        addMetric("backward", begin);
    }

    void zeroGradients() {
        if (units != null) {
            units.forEach(FlatUnit::discardReductions);
            units.forEach(FlatUnit::zeroGradient);
        }
        partialGradients = false;
    }

    /**
     * Drops a training pass that was never backpropagated: its gradient collector closed (called
     * once per collector).
     */
    void collectorClosed() {
        openCollectors = Math.max(0, openCollectors - 1);
        if (staged != null) {
            staged.abandon();
        }
    }

    /**
     * Gathers every sharded parameter's full value, one unit at a time, and hands it to a consumer
     * on every rank: what full checkpoints and comparisons read. A collective over the shard group;
     * only one unit is gathered at a time.
     *
     * <p>If the consumer throws, it is not called again, but every remaining unit is still gathered
     * and released, so that the other ranks' gathers are matched; then its exception is rethrown.
     *
     * @param consumer receives each parameter's name and full value; the array is valid only during
     *     the call (copy what must outlive it)
     */
    public void forEachFullParameter(BiConsumer<String, NDArray> consumer) {
        shard();
        staged.abandon();
        Throwable failure = null;
        for (FlatUnit u : units) {
            try {
                try {
                    u.gather();
                    List<String> names = u.spec().names();
                    for (int i = 0; failure == null && i < names.size(); i++) {
                        NDArray value = u.view(i, false);
                        try {
                            consumer.accept(names.get(i), value);
                        } catch (RuntimeException | Error e) {
                            failure = e;
                        }
                    }
                } finally {
                    u.release();
                }
            } catch (RuntimeException | Error e) {
                // A collective failing after the consumer did: the consumer's failure comes first.
                if (failure == null) {
                    throw e;
                }
                failure.addSuppressed(e);
                break;
            }
        }
        if (failure instanceof RuntimeException e) {
            throw e;
        } else if (failure != null) {
            throw (Error) failure;
        }
    }

    /**
     * Returns the process group the gradients are averaged over.
     *
     * @return the world group
     */
    public ProcessGroup getProcessGroup() {
        return group;
    }

    /**
     * Returns the sharding strategy.
     *
     * @return the strategy
     */
    public ShardingStrategy getStrategy() {
        return strategy;
    }

    /**
     * Returns the units' names, in gathering order.
     *
     * @return the names; empty before the parameters are sharded
     */
    public List<String> getUnitNames() {
        List<String> names = new ArrayList<>();
        if (layout != null) {
            layout.units().forEach(u -> names.add(u.name()));
        }
        return names;
    }

    /**
     * Returns whether the model runs stage by stage ({@code false}: it has no staged form and is
     * gathered whole for each step).
     *
     * @return whether the model is staged
     */
    public boolean isStaged() {
        shard();
        return staging;
    }

    /**
     * Returns what this rank holds at rest, in bytes, counted from the arrays themselves: its
     * shards of the parameters, their gradients, and the optimizer's state for them. Gradients
     * exist from the first backward pass and the optimizer's state from the first step, so before
     * them those count as zero.
     *
     * @return the bytes held
     */
    public MemoryAtRest memoryAtRest() {
        shard();
        long params = 0;
        long grads = 0;
        long state = 0;
        for (FlatUnit u : units) {
            params += u.shard().size() * 4;
            grads += u.hasGradient() ? u.gradient().size() * 4 : 0;
            for (String id : optimizerIds(u)) {
                for (NDArray a : OptimizerState.arrays(optimizer, id)) {
                    state += a.size() * a.getDataType().getNumOfBytes();
                }
            }
        }
        return new MemoryAtRest(params, grads, state);
    }

    /**
     * Bytes one rank holds at rest.
     *
     * @param parameters its parameter shards
     * @param gradients the gradients of those shards
     * @param optimizerState the optimizer's state for them (Adam's moments, SGD's momentum)
     */
    public record MemoryAtRest(long parameters, long gradients, long optimizerState) {

        /**
         * Returns the sum.
         *
         * @return all bytes
         */
        public long total() {
            return parameters + gradients + optimizerState;
        }
    }

    /**
     * Closes the trainer: drops a pass in progress, waits for the reductions in flight and frees
     * the shards, their gradients and the pooled buffers. Each sharded parameter is first given a
     * copy of this rank's part of it, owned by the model's manager (the whole parameter, in its
     * shape, where the shard group has one rank), so that the model stays usable; see the class
     * description. Then this trainer's optimizer state (its ids' state arrays, such as Adam's
     * moments or SGD's momentum, and their update counts) is closed and dropped from the optimizer,
     * even when closing failed: DJL's optimizers detach their state arrays from every manager, so
     * nothing else frees them, and an optimizer outliving the trainer (one {@code TrainingConfig}
     * for several models) would grow by each trainer's state. Other trainers' state stays, and so
     * does the optimizer's number of updates, which DJL 0.35.1 keeps for the whole optimizer (the
     * next trainer's Adam bias correction and learning-rate trackers go on from it, as under plain
     * DJL trainers). No collective: it runs on failure paths too, whatever the other ranks do. Does
     * not close the process group or the optimizer. Idempotent; a failure dropping the optimizer
     * state never hides an earlier one (it is suppressed in it).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        Throwable failure = null;
        try {
            try {
                if (staged != null) {
                    staged.abandon();
                }
            } finally {
                try {
                    if (units != null) {
                        // The parameters keep copies of this rank's parts, or the model would hold
                        // views of released shards; none where the model itself is closed already.
                        NDManager keeper = getModel().getNDManager();
                        closeAll(units, keeper.isOpen() ? keeper : null);
                    }
                } finally {
                    pool.close();
                }
            }
        } catch (RuntimeException | Error e) {
            failure = e;
            throw e;
        } finally {
            try {
                dropOptimizerState(failure);
            } finally {
                super.close();
            }
        }
    }

    /**
     * Closes and drops this trainer's state in the optimizer, which outlives the trainer (shared,
     * or reused by the next trainer of its config); the parameters hold their copies by now, and
     * nothing reads the state again. A failure here is suppressed in {@code failure}, close's own,
     * when there is one, so as not to hide it; else thrown.
     */
    private void dropOptimizerState(Throwable failure) {
        if (units == null) {
            return;
        }
        try {
            List<String> ids = new ArrayList<>();
            for (FlatUnit u : units) {
                ids.addAll(optimizerIds(u));
            }
            OptimizerState.remove(optimizer, ids);
        } catch (RuntimeException e) {
            if (failure == null) {
                throw e;
            }
            failure.addSuppressed(e);
        }
    }

    // Every unit closed, even after one fails: the first failure is thrown, the others suppressed.
    // With a keeper, each unit first hands its parameters copies of their parts, owned by it.
    private static void closeAll(List<FlatUnit> units, NDManager keeper) {
        RuntimeException failure = null;
        for (FlatUnit u : units) {
            try {
                try {
                    if (keeper != null) {
                        u.handOver(keeper);
                    }
                } finally {
                    u.close();
                }
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    StagedStep staged() {
        shard();
        return staged;
    }

    List<FlatUnit> units() {
        shard();
        return units;
    }

    /** The buffers kept for reuse (tests read what they hold). */
    BufferPool pool() {
        return pool;
    }

    UnitLayout layout() {
        shard();
        return layout;
    }

    Optimizer optimizer() {
        return optimizer;
    }

    ProcessGroup shardGroup() {
        return shardGroup;
    }

    ProcessGroup replicaGroup() {
        return replicaGroup;
    }

    /**
     * The optimizer ids of a unit's shard, one per range it is updated in: this trainer's prefix,
     * the unit's name and the range's number. The prefix keeps apart the state of trainers that
     * share one optimizer (one {@code TrainingConfig} used twice), whose units may have the same
     * names; sharded checkpoints name units, not ids.
     */
    List<String> optimizerIds(FlatUnit u) {
        List<String> ids = new ArrayList<>();
        for (int c = 0; c < u.sliceCount(); c++) {
            ids.add(optimizerPrefix + u.name() + "/" + c);
        }
        return ids;
    }

    /**
     * Checks every rank's parameters and units against every other's, takes rank 0's values and
     * keeps this rank's shards, once.
     */
    private void shard() {
        if (units != null) {
            return;
        }
        Block block = getModel().getBlock();
        List<Stage> stages = Stages.of(block).orElse(null);
        staging = stages != null;
        if (stages == null) {
            logger.info(
                    "FSDP: {} has no staged form (a StagedBlock or a SequentialBlock): every unit is"
                            + " gathered for the whole step, sharded at rest only",
                    block.getClass().getSimpleName());
            stages = List.of(Stage.of("model", block));
        }
        ModelSync.Layout ml = ModelSync.layout(block.getParameters(), Parameter::getArray);
        LinkedHashMap<String, Parameter> trainable = new LinkedHashMap<>();
        for (int i = 0; i < ml.grads().length; i++) {
            Parameter p = ml.grads()[i];
            DataType type = p.getArray().getDataType();
            if (type != DataType.FLOAT32) {
                throw new IllegalArgumentException(
                        "parameter "
                                + ml.gradNames().get(i)
                                + ": "
                                + type
                                + " (expected: float32; FSDP trains fp32 parameters, and DJL"
                                + " 0.35.1's engine aborts on bfloat16)");
            }
            trainable.put(ml.gradNames().get(i), p);
        }
        UnitLayout l = UnitLayout.of(stages, policy, trainable);
        // What trains now, as the units are laid out: backward passes and steps check it.
        Trainability trains = Trainability.of(block.getParameters());
        ModelSync.verifyAcrossRanks(
                group,
                ml.signature()
                        + "strategy "
                        + strategy
                        + ", shard group "
                        + (shardGroup == null ? 1 : shardGroup.getSize())
                        + "\n"
                        + l.signature());
        List<NDArray> all = new ArrayList<>();
        for (Parameter[] ps : new Parameter[][] {ml.grads(), ml.buffers(), ml.frozen()}) {
            for (Parameter p : ps) {
                all.add(p.getArray());
            }
        }
        ModelSync.broadcast(group, all);
        List<FlatUnit> list = buildUnits(l);
        // Only once every unit is built: a failure before leaves every parameter whole, and a
        // retry lays out full parameters again, not the shards of some.
        for (FlatUnit u : list) {
            List<Parameter> params = u.spec().parameters();
            for (int i = 0; i < params.size(); i++) {
                ParameterArrays.replace(params.get(i), u.localSlice(i));
            }
        }
        units = Collections.unmodifiableList(list);
        layout = l;
        trainability = trains;
        store.setUnits(units);
        staged =
                new StagedStep(
                        stages,
                        l,
                        units,
                        store,
                        getManager(),
                        strategy,
                        checkpointing,
                        reshardInPlace(),
                        seedBase);
    }

    /** Shards every unit's parameter values; closes the units built so far if one fails. */
    private List<FlatUnit> buildUnits(UnitLayout l) {
        List<FlatUnit> list = new ArrayList<>();
        try {
            for (UnitLayout.Unit spec : l.units()) {
                List<NDArray> values = new ArrayList<>();
                spec.parameters().forEach(p -> values.add(p.getArray()));
                list.add(
                        new FlatUnit(
                                list.size(),
                                spec,
                                values,
                                getManager(),
                                pool,
                                slice,
                                shardGroup,
                                replicaGroup));
            }
        } catch (RuntimeException | Error e) {
            try {
                closeAll(list, null); // the parameters still hold their full values
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        return list;
    }

    /**
     * The resizer that frees a unit's memory after its forward pass for a strategy that reshards,
     * or null where the backward pass must recompute instead (a GPU, another libtorch), said once.
     */
    private StorageResize reshardInPlace() {
        if (!strategy.reshardsAfterForward() || checkpointing) {
            return null;
        }
        if (!Device.Type.CPU.equals(getManager().getDevice().getDeviceType())) {
            logger.info(
                    "{} on {}: each unit's forward pass is recomputed for its backward pass"
                            + " (freeing gathered memory in place is done on CPU only)",
                    strategy,
                    getManager().getDevice());
            return null;
        }
        StorageResize r = StorageResize.get(getManager()).orElse(null);
        if (r == null) {
            logger.warn(
                    "{}: each unit's forward pass is recomputed for its backward pass: {}",
                    strategy,
                    StorageResize.whyUnavailable());
        }
        return r;
    }

    /** Builds a {@link FullyShardedDataParallel}. */
    public static final class Builder extends DataParallelBuilder<Builder> {

        private ShardingStrategy strategy = ShardingStrategy.FULL_SHARD;
        private WrapPolicy policy;
        private DeviceMesh mesh;
        private double maxGradNorm;
        private long heapThreshold = 4 << 20;
        private long slice = FlatUnit.SLICE;
        private boolean checkpointing;

        Builder() {}

        /** {@inheritDoc} */
        @Override
        protected Builder self() {
            return this;
        }

        ProcessGroup processGroup() {
            return group;
        }

        /** Sets the longest range the optimizer updates at once (tests use small ones). */
        Builder optimizerSlice(long elements) {
            this.slice = elements;
            return this;
        }

        /**
         * Sets the sharding strategy (default {@link ShardingStrategy#FULL_SHARD}).
         *
         * @param strategy the strategy
         * @return this builder
         */
        public Builder optStrategy(ShardingStrategy strategy) {
            this.strategy = strategy;
            return this;
        }

        /**
         * Recomputes each unit's forward pass during the backward pass from the unit's input
         * instead of keeping its activations (activation checkpointing: PyTorch's {@code
         * checkpoint_wrapper} on each unit; default off). It trades one more forward pass per step
         * for memory: only the units' inputs are kept between the passes. Without it, {@link
         * ShardingStrategy#FULL_SHARD} frees each unit's gathered parameters after its forward pass
         * and gathers them again into the same memory for its backward, as PyTorch's FSDP does;
         * where that memory cannot be freed in place (a GPU, a libtorch other than 2.7.1), it
         * recomputes anyway, and says so once.
         *
         * @param checkpointing whether to recompute
         * @return this builder
         */
        public Builder optActivationCheckpointing(boolean checkpointing) {
            this.checkpointing = checkpointing;
            return this;
        }

        /**
         * Sets the wrap policy (default: one unit per stage that is a block, the rest in the root
         * unit; for the GPT, one unit per transformer block).
         *
         * @param policy the policy
         * @return this builder
         */
        public Builder optWrapPolicy(WrapPolicy policy) {
            this.policy = policy;
            return this;
        }

        /**
         * Sets the mesh for {@link ShardingStrategy#HYBRID_SHARD}: parameters are sharded across
         * dimension 1 (a row) and replicated across dimension 0. Only that strategy takes one:
         * {@link #build()} refuses a mesh with any other.
         *
         * @param mesh the mesh over the process group's ranks; not closed by the trainer
         * @return this builder
         */
        public Builder optDeviceMesh(DeviceMesh mesh) {
            this.mesh = mesh;
            return this;
        }

        /**
         * Clips the gradient's global 2-norm over all ranks before each step, as PyTorch's {@code
         * clip_grad_norm_} (default: no clipping).
         *
         * @param maxNorm the largest norm, positive
         * @return this builder
         */
        public Builder optClipGradNorm(double maxNorm) {
            if (!(maxNorm > 0)) {
                throw new IllegalArgumentException("maxNorm: " + maxNorm + " (expected: > 0)");
            }
            this.maxGradNorm = maxNorm;
            return this;
        }

        /**
         * Sets the size from which freed C heap blocks go back to the kernel at once (glibc's
         * {@code mallopt(M_MMAP_THRESHOLD)}, process-wide), for the sharding strategies; default 4
         * MiB, 0 leaves the heap as it is. FSDP frees a unit's worth of memory many times a step;
         * without this, under {@code bin/djlrun}'s heap settings (freed memory kept for reuse) the
         * heap fragments and resident memory grows past what sharding saves. The cost: those blocks
         * are faulted in again when allocated.
         *
         * @param bytes the threshold, or 0
         * @return this builder
         */
        public Builder optHeapThreshold(long bytes) {
            if (bytes < 0 || bytes > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(
                        "heapThreshold: " + bytes + " (expected: 0 to " + Integer.MAX_VALUE + ")");
            }
            this.heapThreshold = bytes;
            return this;
        }

        /**
         * Builds the trainer. The parameters are sharded at {@code initialize}, or at the first
         * forward pass or step for a model already initialized or loaded.
         *
         * @return the trainer
         * @throws IllegalArgumentException if something required is missing or inconsistent
         */
        public FullyShardedDataParallel build() {
            if (strategy == null) {
                throw new IllegalArgumentException("strategy: null (expected: a ShardingStrategy)");
            }
            Device d = prepare(); // first: it checks that the group is set
            int[] shape = mesh == null ? null : mesh.getShape();
            if (strategy == ShardingStrategy.HYBRID_SHARD) {
                if (shape == null || shape[0] * shape[1] != group.getSize()) {
                    throw new IllegalArgumentException(
                            "deviceMesh: "
                                    + (shape == null ? "none" : shape[0] + " x " + shape[1])
                                    + " (expected: for HYBRID_SHARD, a mesh over the "
                                    + group.getSize()
                                    + " ranks of the process group)");
                }
            } else if (shape != null) {
                // Refused rather than ignored: the other strategies run over the process group
                // alone, so whoever set a mesh would not get the layout they asked for.
                throw new IllegalArgumentException(
                        "deviceMesh: "
                                + shape[0]
                                + " x "
                                + shape[1]
                                + " with "
                                + strategy
                                + " (expected: no mesh; only HYBRID_SHARD uses one, the other"
                                + " strategies run over the process group)");
            }
            Device modelDevice = model.getNDManager().getDevice();
            if (!modelDevice.equals(d)) {
                // FSDP shards the model's own arrays in place: they must be where it trains.
                throw new IllegalArgumentException(
                        "model: on "
                                + modelDevice
                                + " (expected: on "
                                + d
                                + ", the device FSDP trains on; make the model there, e.g."
                                + " Model.newInstance(name, Distributed.localDevice()))");
            }
            if (!"PyTorch".equals(model.getNDManager().getEngine().getEngineName())) {
                throw new IllegalArgumentException(
                        "model: engine "
                                + model.getNDManager().getEngine().getEngineName()
                                + " (expected: PyTorch, whose backward FSDP runs stage by stage)");
            }
            if (policy == null) {
                policy = stages -> defaultGroups(stages);
            }
            RankAverages averages = new RankAverages(group);
            return new FullyShardedDataParallel(
                    model,
                    new DataParallelConfig(
                            config, d, averages, group.getRank(), group.getSize(), t -> {}),
                    this);
        }

        private static int[] defaultGroups(List<Stage> stages) {
            int[] groups = new int[stages.size()];
            for (int k = 0; k < groups.length; k++) {
                groups[k] = stages.get(k).getBlock() != null ? k : -1;
            }
            return groups;
        }
    }
}
