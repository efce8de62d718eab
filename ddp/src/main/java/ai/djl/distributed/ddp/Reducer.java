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

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.parallel.FlatBuffer;
import ai.djl.distributed.parallel.InPlace;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The gradient reducer of DDP, as PyTorch's {@code Reducer}: flat buckets per {@link
 * BucketAssignment}, filled from the gradients, reduced by a {@link CommHook} in bucket order, and
 * handed back bucket by bucket as soon as each is reduced.
 *
 * <p>One synchronized step ({@link #reduce}):
 *
 * <ol>
 *   <li>For each bucket in order: copy its parameters' gradients into its {@link FlatBuffer} (a
 *       memory copy on the CPU, NDArray operations elsewhere; a parameter with no gradient
 *       contributes zeros) and start the hook on it. The copy of bucket k+1 overlaps the reduction
 *       of bucket k.
 *   <li>For each bucket in order: wait for its reduction, then hand each parameter's averaged
 *       gradient (a view of the reduced buffer, shaped like the parameter) to the consumer, which
 *       runs the optimizer on it while later buckets are still on the wire.
 * </ol>
 *
 * <p>Gradients are not copied back: DJL's optimizers take the gradient as an argument, so they read
 * the reduced buffer directly. Not thread-safe: one training thread drives it.
 */
final class Reducer implements AutoCloseable {

    private static final Duration WAIT_SLACK = Duration.ofSeconds(5);

    private final ProcessGroup group;
    private final NDManager manager;
    private final List<String> names;
    private final Shape[] shapes;
    private final DataType[] types;
    private final long[] numels;
    private final long[] bytes;
    private final CommHook hook;
    private final long firstBucketBytes;
    private final long bucketCapBytes;
    private final Duration waitLimit;
    private BucketAssignment assignment;
    private ReducerBucket[] buckets = new ReducerBucket[0];
    private int[] bucketOf = new int[0];
    private NDArray usedMap;
    private Pending pending;
    private boolean abandoned;

    /** Where the reducer reads this rank's gradients. */
    @FunctionalInterface
    interface GradientSource {
        /**
         * Returns a parameter's gradient.
         *
         * @param param the parameter's index
         * @return a fresh handle to its gradient, closed by the reducer after copying; or null if
         *     it has none this step
         */
        NDArray gradient(int param);
    }

    /** What receives the averaged gradients. */
    @FunctionalInterface
    interface Consumer {
        /**
         * Receives one parameter's averaged gradient.
         *
         * @param param the parameter's index
         * @param gradient a view of the reduced bucket, valid during the call only
         */
        void accept(int param, NDArray gradient);
    }

    Reducer(
            ProcessGroup group,
            NDManager parent,
            List<String> names,
            Shape[] shapes,
            DataType[] types,
            CommHook hook,
            long firstBucketBytes,
            long bucketCapBytes) {
        this.group = group;
        // Not a sub-manager of the trainer's: if a comm hook's work never ends, the buckets it may
        // still write must outlive the trainer (close() keeps them then).
        this.manager = parent.getEngine().newBaseManager(parent.getDevice());
        this.names = List.copyOf(names);
        this.shapes = shapes.clone();
        this.types = types.clone();
        this.hook = hook;
        this.firstBucketBytes = firstBucketBytes;
        this.bucketCapBytes = bucketCapBytes;
        // The group's collectives end by its timeout; a little more lets their failure show.
        this.waitLimit = group.getTimeout().plus(WAIT_SLACK);
        numels = new long[shapes.length];
        bytes = new long[shapes.length];
        for (int i = 0; i < shapes.length; i++) {
            numels[i] = shapes[i].size();
            bytes[i] = numels[i] * types[i].getNumOfBytes();
        }
        try {
            setAssignment(BucketAssignment.initial(bytes, types, firstBucketBytes, bucketCapBytes));
        } catch (RuntimeException e) {
            manager.close(); // nothing else holds it: it is no sub-manager of the trainer's
            throw e;
        }
    }

    BucketAssignment getAssignment() {
        return assignment;
    }

    /**
     * Reduces one step's gradients: {@link #launch} then {@link #completeAll}.
     *
     * @param source this rank's gradients
     * @param used which parameters took part in this rank's forward passes since the last step;
     *     read only with {@code findUnused}
     * @param findUnused whether to find the parameters no rank used (one more small all-reduce,
     *     before the buckets) and not hand them to the consumer
     * @param consumer receives each averaged gradient, bucket by bucket, in bucket order
     * @return the nanoseconds this thread spent waiting for reductions: the communication that
     *     nothing overlapped
     */
    long reduce(GradientSource source, boolean[] used, boolean findUnused, Consumer consumer) {
        launch(source, used, findUnused, consumer);
        return completeAll();
    }

    /**
     * Starts one step's reduction: fills every bucket from the gradients and starts the hook on it,
     * in bucket order, then returns. The gradients may change once this returns; the buckets are
     * handed to the consumer by {@link #complete} and {@link #completeAll}.
     *
     * @param source this rank's gradients
     * @param used which parameters took part in this rank's forward passes since the last step
     * @param findUnused whether to find the parameters no rank used and not hand them on
     * @param consumer receives each averaged gradient
     * @throws IllegalStateException if the previous step's reduction is not complete
     */
    void launch(GradientSource source, boolean[] used, boolean findUnused, Consumer consumer) {
        begin(source, used, findUnused, consumer);
        launchRemaining(pending);
    }

    /**
     * Starts one step's reduction without launching any bucket yet: {@link #launchReady} launches
     * them as their gradients become final during a staged backward pass, {@link #completeAll}
     * launches the rest.
     *
     * @param source this rank's gradients; read when a bucket is launched
     * @param used which parameters took part in this rank's forward passes since the last step
     * @param findUnused whether to find the parameters no rank used and not hand them on
     * @param consumer receives each averaged gradient
     * @throws IllegalStateException if the previous step's reduction is not complete
     */
    void begin(GradientSource source, boolean[] used, boolean findUnused, Consumer consumer) {
        if (pending != null) {
            throw new IllegalStateException("the previous reduction is not complete");
        }
        if (abandoned) {
            throw new IllegalStateException(
                    "a comm hook's reduction never completed: its buckets may still be written, so"
                            + " this trainer cannot reduce again");
        }
        Pending p = new Pending(consumer, manager.newSubManager(), source);
        pending = p;
        try {
            if (findUnused) {
                p.usedAnywhere = launchUsedMap(used);
            }
        } catch (RuntimeException e) {
            p.failure = e;
        }
    }

    /**
     * Launches, in bucket order, every next bucket whose parameters' gradients are all final.
     *
     * @param ready which parameters' gradients are final
     */
    void launchReady(boolean[] ready) {
        launchNext(pending, ready);
    }

    private void launchRemaining(Pending p) {
        launchNext(p, null);
    }

    /**
     * Fills and launches, in bucket order, every next bucket of a step whose parameters' gradients
     * are all final ({@code ready} null: every bucket left). A failure is recorded in the step.
     */
    private void launchNext(Pending p, boolean[] ready) {
        if (p == null || p.failure != null) {
            return;
        }
        try {
            while (p.launched.size() < buckets.length
                    && (ready == null || buckets[p.launched.size()].isReady(ready))) {
                ReducerBucket b = buckets[p.launched.size()];
                b.fill(p.source);
                p.launched.add(hook.reduce(group, b.view(p.step)));
            }
        } catch (RuntimeException e) {
            p.failure = e;
        }
    }

    /**
     * Returns whether the pending step failed to launch every bucket's reduction: then it must be
     * completed ({@link #completeAll}, which throws) before anything else is sent.
     *
     * @return whether the pending launch failed
     */
    boolean launchFailed() {
        return pending != null && pending.failure != null;
    }

    /**
     * Returns whether a reduction was launched and not yet completely handed on.
     *
     * @return whether one is pending
     */
    boolean isPending() {
        return pending != null;
    }

    /**
     * Completes the bucket holding a parameter, if its reduction is pending: waits for it and hands
     * its parameters' gradients to the consumer.
     *
     * @param param the parameter's index
     * @return the nanoseconds spent waiting for the step's reductions, in all, when this call
     *     completed the step's last bucket; else -1
     */
    long complete(int param) {
        Pending p = pending;
        if (p == null) {
            return -1;
        }
        if (p.failure == null) {
            int k = bucketOf[param];
            if (!p.consumed[k]) {
                consume(p, k);
                p.left--;
            }
        }
        return p.failure != null || p.left == 0 ? completeAll() : -1;
    }

    /**
     * Completes every pending bucket, in bucket order.
     *
     * @return the nanoseconds spent waiting for this step's reductions, in all
     * @throws RuntimeException the first failure of the step's reduction, once every started
     *     reduction is over
     */
    long completeAll() {
        Pending p = pending;
        if (p == null) {
            return 0;
        }
        launchRemaining(p);
        try {
            for (int k = 0; k < p.launched.size(); k++) {
                if (!p.consumed[k]) {
                    consume(p, k);
                    p.left--;
                }
            }
            if (p.usedAnywhere != null && p.anywhere == null) {
                // A launch that failed after starting the unused-parameter map: it must be over
                // before the map is written again or freed.
                join(p.usedAnywhere, null);
            }
            if (p.failure != null) {
                throw p.failure;
            }
            return p.waited;
        } finally {
            pending = null;
            if (!abandoned) {
                // Every launched reduction is over (consume waited for each): nothing writes the
                // step's arrays any more.
                p.step.close();
            }
        }
    }

    /**
     * Waits for bucket k's reduction and hands it on. Never throws: a failure is recorded, and
     * later buckets are still waited for, so that no reduction is left writing memory the step
     * frees.
     */
    private void consume(Pending p, int k) {
        p.consumed[k] = true;
        long w = System.nanoTime();
        if (p.usedAnywhere != null && p.anywhere == null && p.failure == null) {
            p.failure = join(p.usedAnywhere, null);
            p.anywhere = p.failure == null ? usedMap.toFloatArray() : null;
        }
        NDArray result = null;
        try {
            // Once one reduction has outlived the limit, the others get no further wait: the
            // step is bounded by one limit, not one per bucket.
            long limit = abandoned ? 0 : waitLimit.toNanos();
            result = p.launched.get(k).get(limit, TimeUnit.NANOSECONDS);
            if (result == null) {
                throw new IllegalStateException(
                        "comm hook for gradient bucket "
                                + k
                                + ": null (expected: the reduced bucket)");
            }
        } catch (ExecutionException | CancellationException e) {
            p.fail(unwrap(e, k));
        } catch (TimeoutException e) {
            // Only a comm hook of the caller's can get here (the group's own collectives fail at
            // its timeout): its work may still write the step's arrays and the buckets, so they
            // are left alive, and the reducer refuses further steps.
            abandoned = true;
            p.fail(
                    new DistributedException(
                            "gradient bucket "
                                    + k
                                    + " "
                                    + buckets[k].paramNames
                                    + ": the comm hook's reduction did not complete within "
                                    + waitLimit));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            abandoned = true;
            p.fail(
                    new DistributedException(
                            "interrupted while waiting for gradient bucket " + k, e));
        } catch (RuntimeException e) {
            p.fail(e);
        }
        p.waited += System.nanoTime() - w;
        if (p.failure == null) {
            try {
                buckets[k].consume(result, p.anywhere, p.consumer);
            } catch (RuntimeException e) {
                p.failure = e;
            }
        }
    }

    /**
     * Drops the pending step, for a backward pass that failed part way: launches no further bucket,
     * waits for those launched (each at most the group's timeout and a little more) so that none
     * writes the buckets any more, and hands nothing to the consumer. Their results, and failures,
     * are dropped with the step. Never throws.
     *
     * <p>The buckets already launched are those every rank that ran as far launched too, so they
     * complete; a rank that never launches the rest leaves its peers to fail at the group's timeout
     * in theirs, as PyTorch's DDP does when one rank's backward pass fails.
     */
    void discard() {
        Pending p = pending;
        if (p == null) {
            return;
        }
        pending = null;
        if (p.usedAnywhere != null && !awaitQuietly(p.usedAnywhere)) {
            abandoned = true;
        }
        for (CompletableFuture<NDArray> f : p.launched) {
            if (!awaitQuietly(f)) {
                abandoned = true;
            }
        }
        if (!abandoned) {
            p.step.close(); // nothing writes the step's arrays any more
        }
    }

    /**
     * Waits for a dropped reduction, at most the wait limit (none once the reducer is abandoned).
     * Returns whether it is over; a failed one is.
     */
    private boolean awaitQuietly(CompletableFuture<?> f) {
        try {
            f.get(abandoned ? 0 : waitLimit.toNanos(), TimeUnit.NANOSECONDS);
            return true;
        } catch (ExecutionException | CancellationException e) {
            return true; // dropped with the step: nothing reads its buffers
        } catch (TimeoutException e) {
            return false; // a comm hook's work that never ends may still write the buckets
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Rebuilds the buckets from the order gradients became ready, rank 0's order for every rank.
     * Every rank must call it at the same point of training.
     *
     * @param readyOrder this rank's ready order (parameter indices)
     */
    void rebuild(int[] readyOrder) {
        ByteBuffer encoded =
                ByteBuffer.allocate(4 * readyOrder.length).order(ByteOrder.LITTLE_ENDIAN);
        encoded.asIntBuffer().put(readyOrder);
        byte[] root = group.objects().broadcast(group.getRank() == 0 ? encoded.array() : null, 0);
        int[] order = new int[root.length / 4];
        ByteBuffer.wrap(root).order(ByteOrder.LITTLE_ENDIAN).asIntBuffer().get(order);
        setAssignment(
                BucketAssignment.rebuilt(order, bytes, types, firstBucketBytes, bucketCapBytes));
    }

    /**
     * Releases the buckets, once reductions still on the wire are over (their results are dropped).
     * Idempotent.
     */
    @Override
    public void close() {
        discard();
        if (!abandoned) {
            manager.close(); // else leaked on purpose: a comm hook's work may still write them
        }
    }

    private void setAssignment(BucketAssignment next) {
        if (pending != null) {
            throw new IllegalStateException("buckets rebuilt while a reduction is pending");
        }
        for (ReducerBucket b : buckets) {
            b.close();
        }
        assignment = next;
        buckets = new ReducerBucket[next.size()];
        bucketOf = new int[names.size()];
        for (int k = 0; k < buckets.length; k++) {
            buckets[k] =
                    new ReducerBucket(
                            k,
                            next.getBucket(k),
                            k == buckets.length - 1,
                            names,
                            shapes,
                            types,
                            manager);
            for (int p : buckets[k].params) {
                bucketOf[p] = k;
            }
        }
    }

    private CompletableFuture<Void> launchUsedMap(boolean[] used) {
        if (usedMap == null) {
            usedMap = manager.zeros(new Shape(names.size()), DataType.FLOAT32);
        }
        float[] flags = new float[names.size()];
        for (int i = 0; i < flags.length; i++) {
            flags[i] = used[i] ? 1f : 0f;
        }
        try (NDArray f = manager.create(flags)) {
            InPlace.copy(f, usedMap, "used map");
        }
        return group.allReduceAsync(usedMap, ReduceOp.SUM).getFuture();
    }

    private static RuntimeException join(CompletableFuture<Void> f, RuntimeException failure) {
        try {
            f.join();
            return failure;
        } catch (CompletionException e) {
            return failure == null ? unwrap(e, -1) : failure;
        }
    }

    private static RuntimeException unwrap(Exception e, int bucket) {
        Throwable c = e.getCause() == null ? e : e.getCause();
        if (c instanceof RuntimeException) {
            return (RuntimeException) c;
        }
        return new DistributedException(
                (bucket < 0 ? "unused-parameter map" : "gradient bucket " + bucket)
                        + ": reduction failed",
                c);
    }

    /** A launched step: its reductions, what is handed on, and the first failure. */
    private final class Pending {

        final Consumer consumer;
        final NDManager step;
        final GradientSource source;
        final List<CompletableFuture<NDArray>> launched = new ArrayList<>();
        final boolean[] consumed = new boolean[buckets.length];
        CompletableFuture<Void> usedAnywhere;
        float[] anywhere;
        RuntimeException failure;
        long waited;
        int left = buckets.length;

        Pending(Consumer consumer, NDManager step, GradientSource source) {
            this.consumer = consumer;
            this.step = step;
            this.source = source;
        }

        /** Records a failure of the step; the first one is the one thrown. */
        void fail(RuntimeException e) {
            if (failure == null) {
                failure = e;
            }
        }
    }
}
