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

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.parallel.FlatBuffer;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Parameter;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.training.optimizer.Optimizer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * One FSDP unit at run time (PyTorch's {@code FlatParameter}): the unit's parameters flattened in
 * definition order, {@code L} elements right-padded to {@code S * chunk} for a shard group of
 * {@code S} ranks, of which this rank keeps {@code [r * chunk, (r + 1) * chunk)} (its shard) and
 * the gradient of that range. {@link #gather} fills a full flat buffer from every rank's shard and
 * hands the parameters out as views of it; {@link #reduce} packs the views' gradients, reduces them
 * onto the shards (reduce-scatter within the shard group, then all-reduce across replicas) and
 * frees the full buffer; {@link #finishReductions} adds the averaged result to the shard's
 * gradient.
 *
 * <p>Owns its shard, gradient and gathered buffers (sub-managers of the trainer's manager); the
 * unit's parameters hold views of the shard until {@link #handOver} gives them copies. Not
 * thread-safe: the training thread drives it; collectives run on the process group's threads.
 */
final class FlatUnit implements AutoCloseable {

    private final int index;
    private final UnitLayout.Unit spec;
    private final Shape[] shapes;
    private final long[] offsets;
    private final long total;
    private final long chunk;
    private final ProcessGroup shardGroup;
    private final ProcessGroup replicaGroup;
    private final int shards;
    private final int worldSize;
    private final NDManager owner;
    private final NDArray shard;
    private final NDArray[] localSlices;
    private final ArrayDeque<Pending> pending = new ArrayDeque<>();
    private NDArray grad; // allocated by the first gradient added (see gradient())
    private final NDArray zero;

    private FlatBuffer gathered;
    private NDArray gatheredArray;
    private Work gatherWork;
    private NDArray[] views;
    private boolean viewsReady;
    // Set by an eviction, until the release that ends the pass (which frees the memory again).
    private StorageResize resharded;
    private boolean evicted; // while the gathered buffer's memory is freed

    private final BufferPool pool;

    private record Pending(
            FlatBuffer flat, NDArray packed, NDArray out, Work scatter, Work allReduce) {}

    /**
     * Shards a unit's parameter values: copies this rank's range of them into a new shard.
     *
     * @param values the unit's parameter values, identical on every rank of the shard group; not
     *     closed
     * @param shardGroup the ranks sharing the unit, or null when this rank holds all of it
     * @param replicaGroup the ranks holding the same shard (hybrid sharding, no sharding), or null
     */
    FlatUnit(
            int index,
            UnitLayout.Unit spec,
            List<NDArray> values,
            NDManager parent,
            BufferPool pool,
            long slice,
            ProcessGroup shardGroup,
            ProcessGroup replicaGroup) {
        this.index = index;
        this.pool = pool;
        this.slice = slice;
        this.spec = spec;
        this.shardGroup = shardGroup;
        this.replicaGroup = replicaGroup;
        int s = shardGroup == null ? 1 : shardGroup.getSize();
        shards = s;
        worldSize = s * (replicaGroup == null ? 1 : replicaGroup.getSize());
        // Waits use each collective's own bound (its group's timeout and the backend's slack):
        // memory goes back to the pool only once no collective writes it.
        Objects.requireNonNull(
                shardGroup != null ? shardGroup : replicaGroup, "shardGroup or replicaGroup");
        shapes = new Shape[values.size()];
        offsets = new long[values.size()];
        long n = 0;
        for (int i = 0; i < shapes.length; i++) {
            NDArray v = values.get(i);
            if (v.getDataType() != DataType.FLOAT32) {
                throw new IllegalArgumentException(
                        "parameter "
                                + spec.names().get(i)
                                + ": "
                                + v.getDataType()
                                + " (expected: float32; FSDP shards fp32 parameters only)");
            }
            shapes[i] = v.getShape();
            offsets[i] = n;
            n += shapes[i].size();
        }
        total = n;
        chunk = (n + s - 1) / s;
        owner = parent.newSubManager();
        try {
            shard = owner.zeros(new Shape(chunk), DataType.FLOAT32);
            zero = owner.zeros(new Shape(), DataType.FLOAT32);
            localSlices = new NDArray[shapes.length];
            long lo = (shardGroup == null ? 0 : shardGroup.getRank()) * chunk;
            for (int i = 0; i < shapes.length; i++) {
                long a = Math.max(offsets[i], lo);
                long b = Math.min(offsets[i] + shapes[i].size(), lo + chunk);
                if (a < b) {
                    // From a detached value, without recording: a parameter takes gradients, and
                    // an in-place copy from it recorded in grad mode would give the shard autograd
                    // history that keeps the full parameter alive.
                    NDIndex from = new NDIndex((a - offsets[i]) + ":" + (b - offsets[i]));
                    NDIndex to = new NDIndex((a - lo) + ":" + (b - lo));
                    try (NDArray detached = values.get(i).stopGradient();
                            NDArray flat = detached.reshape(-1);
                            NDArray part = flat.get(from)) {
                        withoutGrad(() -> shard.set(to, part));
                    }
                    localSlices[i] = shard.get(new NDIndex((a - lo) + ":" + (b - lo)));
                } else {
                    localSlices[i] = shard.get(new NDIndex("0:0"));
                }
            }
        } catch (RuntimeException | Error e) {
            // Nothing of a unit that could not be built outlives it (a shard too large, say).
            owner.close();
            throw e;
        }
    }

    /**
     * The longest range the optimizer updates at once (2 MiB of float32): its temporaries stay
     * small enough to come from the C heap and be reused, rather than mapped and faulted in again
     * for every unit of every step (a quarter of a step's time on the benchmark GPT).
     */
    static final long SLICE = 1 << 19;

    private final long slice;

    int index() {
        return index;
    }

    /** The number of ranges the optimizer updates this rank's shard in. */
    int sliceCount() {
        return (int) ((chunk + slice - 1) / slice);
    }

    /** The start of optimizer range {@code c} in the shard. */
    long sliceStart(int c) {
        return c * slice;
    }

    /** The end (exclusive) of optimizer range {@code c} in the shard. */
    long sliceEnd(int c) {
        return Math.min(chunk, (c + 1) * slice);
    }

    /**
     * Runs the optimizer on the shard, range by range (elementwise optimizers give what one update
     * of the whole shard would), each range its own optimizer state.
     *
     * @param optimizer the optimizer
     * @param ids the optimizer id of each range
     */
    void update(Optimizer optimizer, List<String> ids) {
        if (sliceCount() == 1) {
            optimizer.update(ids.get(0), shard, gradient());
            return;
        }
        for (int c = 0; c < ids.size(); c++) {
            NDIndex range = new NDIndex(sliceStart(c) + ":" + sliceEnd(c));
            try (NDArray w = shard.get(range);
                    NDArray g = gradient().get(range)) {
                optimizer.update(ids.get(c), w, g);
            }
        }
    }

    String name() {
        return spec.name();
    }

    UnitLayout.Unit spec() {
        return spec;
    }

    /** This rank's shard: {@code chunk} elements, zero past the unit's end. */
    NDArray shard() {
        return shard;
    }

    /**
     * The gradient of this rank's shard, accumulated over backward passes since the last step.
     * Allocated (as zeros) on first use rather than when the unit is built, so that sharding a
     * model, which holds its full parameters until every unit is built, does not also hold every
     * unit's gradient.
     */
    NDArray gradient() {
        if (grad == null) {
            grad = owner.zeros(new Shape(chunk), DataType.FLOAT32);
        }
        return grad;
    }

    /** Whether {@link #gradient} has been allocated (by a reduction, a step or a read of it). */
    boolean hasGradient() {
        return grad != null;
    }

    /** The part of parameter {@code i} this rank holds, a view of the shard (maybe empty). */
    NDArray localSlice(int i) {
        return localSlices[i];
    }

    long totalElements() {
        return total;
    }

    long chunkElements() {
        return chunk;
    }

    int parameterCount() {
        return shapes.length;
    }

    long offset(int i) {
        return offsets[i];
    }

    Shape shape(int i) {
        return shapes[i];
    }

    boolean isGathered() {
        return views != null;
    }

    /**
     * Starts gathering the full parameters into a pooled buffer (nothing when already gathered).
     * Returns at once; the first {@link #view} waits for the gather.
     */
    void gather() {
        if (evicted) {
            // Into the same storage: autograd's saved references to the views see the values again.
            resharded.restore(gatheredArray);
            evicted = false;
            fill();
            return;
        }
        if (views != null) {
            return;
        }
        List<Shape> slots = new ArrayList<>(List.of(shapes));
        long padded = chunk * shards;
        if (padded > total) {
            slots.add(new Shape(padded - total));
        }
        gatheredArray = pool.take(chunk * shards);
        gathered = new FlatBuffer("unit " + spec.name(), gatheredArray, slots);
        fill();
        views = gathered.views();
    }

    private void fill() {
        if (shards == 1) {
            // A copy rather than views of the shard: the optimizer updates the shard in place,
            // which autograd forbids under views that took gradients.
            withoutGrad(
                    () -> {
                        for (int i = 0; i < shapes.length; i++) {
                            long end = offsets[i] + shapes[i].size();
                            try (NDArray part = shard.get(new NDIndex(offsets[i] + ":" + end))) {
                                gathered.pack(i, part);
                            }
                        }
                    });
        } else {
            gatherWork = shardGroup.allGatherIntoTensorAsync(gathered.getArray(), shard);
        }
    }

    /**
     * Frees the gathered parameters' memory after the unit's forward pass, as PyTorch's FSDP does,
     * keeping their views, which autograd's graph of that pass references: the next {@link #gather}
     * (for the backward pass) fills the same storage again. Nothing when not gathered, or when an
     * output of the stage is a view of the unit's memory (a parameter handed on as it is, a slice
     * of one): the next stage reads it, and would read freed memory, so the unit stays gathered
     * until the pass ends.
     *
     * @param resize the resizer of this process's libtorch
     * @param outputs the outputs of the unit's last stage, which the next stage reads
     */
    void evict(StorageResize resize, NDList outputs) {
        if (views == null || evicted || shards == 1) {
            // One shard: the gather is a copy that the FlatBuffer writes through the memory it
            // mapped when made, which a resize would move; and the rank holds the unit anyway.
            return;
        }
        for (NDArray out : outputs) {
            if (resize.sharesStorage(out, gatheredArray)) {
                return;
            }
        }
        if (gatherWork != null) {
            gatherWork.waitFor(); // never free memory a collective is writing
            gatherWork = null;
        }
        resize.free(gatheredArray);
        evicted = true;
        resharded = resize;
    }

    /**
     * Waits for the gather in flight, if any: a backward pass that reads the views through
     * autograd's saved references, not through {@link #view}, must not start before it.
     */
    void awaitGather() {
        if (gatherWork != null) {
            gatherWork.waitFor();
            gatherWork = null;
        }
    }

    /** Whether the gathered parameters' memory is freed by {@link #evict} (tests read it). */
    boolean isEvicted() {
        return evicted && resharded.isFreed(gatheredArray);
    }

    /**
     * Returns parameter {@code i}'s full value, waiting for the gather first.
     *
     * @param training whether the view takes gradients (set only once the gather completed, since
     *     arrays handed to collectives must not require gradients)
     */
    NDArray view(int i, boolean training) {
        if (views == null || evicted) {
            throw new IllegalStateException(
                    "unit "
                            + spec.name()
                            + ": parameter "
                            + spec.names().get(i)
                            + (views == null
                                    ? " fetched while the unit is not gathered (expected: every"
                                            + " stage to list the parameters it fetches)"
                                    : " fetched while the unit's memory is freed after its"
                                            + " forward pass (expected: the unit gathered again"
                                            + " first)"));
        }
        awaitGather();
        if (training && !viewsReady) {
            for (int k = 0; k < shapes.length; k++) {
                views[k].setRequiresGradient(true);
            }
            viewsReady = true;
        }
        return views[i];
    }

    /**
     * Packs the gathered views' gradients, starts reducing them onto the shards, and frees the
     * gathered buffer.
     */
    void reduce() {
        List<Shape> slots = new ArrayList<>(List.of(shapes));
        long padded = chunk * shards;
        if (padded > total) {
            slots.add(new Shape(padded - total));
        }
        NDArray packed = pool.take(padded);
        FlatBuffer flat = new FlatBuffer("unit " + spec.name() + " gradients", packed, slots);
        try {
            withoutGrad(
                    () -> {
                        for (int i = 0; i < shapes.length; i++) {
                            if (views != null && viewsReady) {
                                // No gradient (a parameter unused this step) reads as zeros.
                                try (NDArray g = views[i].getGradient()) {
                                    flat.pack(i, g);
                                }
                            } else {
                                flat.zero(i);
                            }
                        }
                        if (padded > total) {
                            flat.zero(shapes.length);
                        }
                    });
            release();
            NDArray out = packed;
            Work scatter = null;
            if (shards > 1) {
                out = pool.take(chunk);
                scatter = shardGroup.reduceScatterTensorAsync(out, flat.getArray(), ReduceOp.SUM);
            }
            Work allReduce = null;
            if (scatter == null && replicaGroup != null && replicaGroup.getSize() > 1) {
                allReduce = replicaGroup.allReduceAsync(out, ReduceOp.SUM);
            }
            pending.add(new Pending(flat, packed, out, scatter, allReduce));
        } catch (RuntimeException e) {
            flat.close();
            pool.give(packed);
            throw e;
        }
    }

    /**
     * Waits for this unit's reductions and adds their average to the shard's gradient. As in {@link
     * #discardReductions}, a reduction whose wait fails goes back to the pool only if its
     * collectives have completed; one still running stays out of it, freed when the trainer closes.
     */
    void finishReductions() {
        while (!pending.isEmpty()) {
            Pending p = pending.poll();
            Work replicas = null;
            boolean done = false;
            try {
                if (p.scatter() != null) {
                    p.scatter().waitFor();
                    if (replicaGroup != null && replicaGroup.getSize() > 1) {
                        // Async with its work kept, not the blocking call: a wait that fails
                        // then still tells whether the all-reduce writes the buffer.
                        replicas = replicaGroup.allReduceAsync(p.out(), ReduceOp.SUM);
                        replicas.waitFor();
                    }
                }
                if (p.allReduce() != null) {
                    p.allReduce().waitFor();
                }
                done = true;
                if (worldSize > 1) {
                    p.out().divi(worldSize);
                }
                gradient().addi(p.out());
            } finally {
                release(p, done || ended(p.scatter(), replicas, p.allReduce()));
            }
        }
    }

    // Closes a reduction's flat view; its buffers go back to the pool only if no collective may
    // still write them (else they stay out, freed when the trainer closes).
    private void release(Pending p, boolean reusable) {
        p.flat().close();
        if (reusable) {
            pool.give(p.packed());
            if (p.out() != p.packed()) {
                pool.give(p.out());
            }
        }
    }

    // Whether none of the collectives (null: not started) still reads or writes its arrays.
    private static boolean ended(Work... works) {
        for (Work w : works) {
            if (w != null && !w.isCompleted()) {
                return false;
            }
        }
        return true;
    }

    boolean hasPendingReductions() {
        return !pending.isEmpty();
    }

    /** Sets the shard's gradient to zeros (after the optimizer step). */
    void zeroGradient() {
        // An array value: a number would make DJL create a scalar array in the shard's manager on
        // every call.
        if (grad != null) { // none yet: nothing was added to zero
            grad.set(new NDIndex(":"), zero);
        }
    }

    /** Frees the gathered parameters and their gradients; the shard stays. */
    void release() {
        if (gatherWork != null) {
            // Never free memory a collective is still writing; a failed gather is done with it.
            Work w = gatherWork;
            try {
                w.waitFor();
            } finally {
                if (w.isCompleted()) {
                    gatherWork = null;
                }
            }
        }
        // The unit is released whatever happens below: a failure must not leave it looking
        // gathered, with views its FlatBuffer already closed.
        FlatBuffer buffer = gathered;
        NDArray array = gatheredArray;
        StorageResize emptiedBy = resharded;
        boolean freed = evicted;
        gathered = null;
        gatheredArray = null;
        evicted = false;
        resharded = null;
        views = null;
        viewsReady = false;
        if (buffer == null) {
            return;
        }
        buffer.close();
        if (emptiedBy == null) {
            pool.give(array);
            return;
        }
        // Freed, not kept resident in the pool: the next pass frees this unit after its forward
        // anyway, and a pool holding every unit's memory between passes would make the peak
        // SHARD_GRAD_OP's.
        try {
            if (!freed) {
                emptiedBy.free(array);
            }
        } catch (RuntimeException | Error e) {
            // A storage not as expected: never handed out again.
            array.close();
            throw e;
        }
        pool.giveEmptied(array, emptiedBy);
    }

    /**
     * Runs buffer copies with grad mode off: on a GPU they are NDArray writes into a buffer whose
     * views take gradients, and an in-place write recorded there links one step's graph to the next
     * (a CPU's memory copies record nothing either way).
     */
    private static void withoutGrad(Runnable copies) {
        boolean mode = JniUtils.isGradMode();
        JniUtils.setGradMode(false);
        try {
            copies.run();
        } finally {
            JniUtils.setGradMode(mode);
        }
    }

    /**
     * Waits for this unit's pending reductions and drops their results: what a failed backward pass
     * leaves. A buffer goes back to the pool only once its collective has completed; one whose
     * collective outlived its wait (the backend stopped waiting, the operation runs on) stays out
     * of the pool, to be freed with it when the trainer closes.
     */
    void discardReductions() {
        while (!pending.isEmpty()) {
            Pending p = pending.poll();
            boolean completed = false;
            try {
                completed = awaitQuietly(p);
            } finally {
                release(p, completed);
            }
        }
    }

    // A reduction of a pass being dropped: its own failure adds nothing to the pass's. Returns
    // whether every collective of it completed, so that none writes its buffers any more.
    private static boolean awaitQuietly(Pending p) {
        boolean completed = true;
        for (Work w : new Work[] {p.scatter(), p.allReduce()}) {
            if (w != null) {
                try {
                    w.waitFor();
                } catch (RuntimeException e) {
                    completed &= w.isCompleted();
                }
            }
        }
        return completed;
    }

    /**
     * Gives each of the unit's parameters an array of its own before the unit closes: a copy of the
     * part this rank holds, owned by {@code keeper}, where the parameter held a view of the shard,
     * which closing releases. Where this rank holds the whole unit (a shard group of one) each copy
     * takes its parameter's shape, so that the model is whole again. Each copy takes gradients if
     * its parameter does, as DJL's own parameters do. No collective.
     *
     * @param keeper the manager that owns the copies from now on (the model's)
     */
    void handOver(NDManager keeper) {
        List<Parameter> params = spec.parameters();
        // Copied without recording: a view the user made take gradients (by unfreezing it) would
        // otherwise give the copy autograd history that keeps the shard alive.
        withoutGrad(
                () -> {
                    for (int i = 0; i < params.size(); i++) {
                        Parameter p = params.get(i);
                        NDArray copy;
                        if (shards == 1) {
                            try (NDArray whole = localSlices[i].reshape(shapes[i])) {
                                copy = whole.duplicate();
                            }
                        } else {
                            copy = localSlices[i].duplicate();
                        }
                        copy.attach(keeper);
                        copy.setName(p.getName());
                        if (p.requiresGradient()) {
                            copy.setRequiresGradient(true);
                        }
                        ParameterArrays.replace(p, copy);
                    }
                });
    }

    /** {@inheritDoc} */
    @Override
    public void close() {
        try {
            // Every pending collective waited out, even past one that failed, before the memory
            // they write is freed.
            for (Pending p : pending) {
                awaitQuietly(p);
            }
            release();
        } finally {
            pending.clear();
            owner.close();
        }
    }
}
