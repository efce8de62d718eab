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
package ai.djl.distributed.parallel;

import ai.djl.distributed.Work;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.nn.Parameter;
import ai.djl.nn.UninitializedParameterException;
import ai.djl.util.Pair;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

/**
 * The start-up synchronization of a data-parallel trainer, as PyTorch's {@code
 * _verify_model_across_ranks} and {@code _sync_module_states}: every rank must have the same
 * parameters (names, shapes, types, whether they take gradients), and starts from rank 0's values,
 * buffers included. {@link #layout} splits a model's parameters into those averaged, buffers and
 * frozen ones; {@link #verifyAcrossRanks} and {@link #broadcast} are collectives.
 *
 * <p>Stateless; the collectives block until every rank has called them (bounded by the group's
 * timeout) and, like every collective, must be called by one thread per rank in the same order on
 * every rank.
 */
public final class ModelSync {

    /**
     * A model's parameters split into those averaged (gradients), buffers and frozen parameters.
     *
     * @param gradNames the names of the parameters that take gradients, in definition order
     * @param grads those parameters
     * @param buffers the parameters that take no gradient and are state, such as running statistics
     *     (types RUNNING_MEAN, RUNNING_VAR and OTHER): PyTorch's module buffers
     * @param frozen weights, biases, gammas and betas that take no gradient (a frozen backbone):
     *     synchronized once, as PyTorch's parameters with {@code requires_grad=False}
     * @param signature one line per parameter: name, shape, type, whether it takes gradients
     */
    public record Layout(
            List<String> gradNames,
            Parameter[] grads,
            Parameter[] buffers,
            Parameter[] frozen,
            String signature) {}

    private ModelSync() {}

    /**
     * Splits a model's parameters, each once, under the name of its first use: a block used twice
     * (weight sharing) lists its parameters once per use, under two names, but each is one
     * parameter, with one gradient (summed over the uses) and one update per step, as DJL's trainer
     * (whose parameter store is keyed by parameter id) and PyTorch ({@code named_parameters()}
     * drops repeats) have it.
     *
     * @param parameters the block's parameters, in definition order
     * @param value the array each parameter is trained as
     * @return the layout
     * @throws IllegalStateException naming a parameter that is not initialized
     */
    public static Layout layout(
            Iterable<Pair<String, Parameter>> parameters, Function<Parameter, NDArray> value) {
        List<String> gradNames = new ArrayList<>();
        List<Parameter> grads = new ArrayList<>();
        List<Parameter> buffers = new ArrayList<>();
        List<Parameter> frozen = new ArrayList<>();
        StringBuilder signature = new StringBuilder();
        Set<Parameter> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        for (Pair<String, Parameter> pair : parameters) {
            Parameter p = pair.getValue();
            if (!seen.add(p)) {
                continue; // a repeat: the same parameter, through a block used again
            }
            NDArray v;
            try {
                v = value.apply(p);
            } catch (UninitializedParameterException e) {
                throw new IllegalStateException(
                        "parameter "
                                + pair.getKey()
                                + " is not initialized (expected: trainer.initialize(shapes) on"
                                + " every rank before training)",
                        e);
            }
            signature.append(pair.getKey()).append(' ').append(v.getShape()).append(' ');
            signature.append(v.getDataType()).append(' ').append(p.requiresGradient()).append('\n');
            if (isRunningStatistic(p.getType())) {
                // Always a buffer: DJL's freezeParameters(false) marks running statistics as
                // taking gradients too, but nothing trains them.
                buffers.add(p);
            } else if (p.requiresGradient()) {
                gradNames.add(pair.getKey());
                grads.add(p);
            } else if (isTrainableType(p.getType())) {
                frozen.add(p);
            } else {
                buffers.add(p);
            }
        }
        return new Layout(
                List.copyOf(gradNames),
                grads.toArray(new Parameter[0]),
                buffers.toArray(new Parameter[0]),
                frozen.toArray(new Parameter[0]),
                signature.toString());
    }

    /**
     * Returns whether a parameter type is a running statistic (batch norm's mean and variance):
     * always a buffer, whatever DJL says of its gradient.
     *
     * @param type a parameter's type
     * @return whether it is RUNNING_MEAN or RUNNING_VAR
     */
    public static boolean isRunningStatistic(Parameter.Type type) {
        return type == Parameter.Type.RUNNING_MEAN || type == Parameter.Type.RUNNING_VAR;
    }

    private static boolean isTrainableType(Parameter.Type type) {
        return type == Parameter.Type.WEIGHT
                || type == Parameter.Type.BIAS
                || type == Parameter.Type.GAMMA
                || type == Parameter.Type.BETA;
    }

    /**
     * Checks that every rank has rank 0's signature. Every rank must call it; it blocks until every
     * rank has (an all-gather, bounded by the group's timeout).
     *
     * @param group the ranks
     * @param signature this rank's signature
     * @throws IllegalStateException on every rank, naming the first rank and parameter that differ
     */
    public static void verifyAcrossRanks(ProcessGroup group, String signature) {
        if (group.getSize() == 1) {
            return;
        }
        List<byte[]> all = group.objects().allGather(signature.getBytes(StandardCharsets.UTF_8));
        String[] mine = new String(all.get(0), StandardCharsets.UTF_8).split("\n", -1);
        for (int r = 1; r < all.size(); r++) {
            String[] theirs = new String(all.get(r), StandardCharsets.UTF_8).split("\n", -1);
            for (int i = 0; i < Math.max(mine.length, theirs.length); i++) {
                String a = i < mine.length ? mine[i] : "(none)";
                String b = i < theirs.length ? theirs[i] : "(none)";
                if (!a.equals(b)) {
                    throw new IllegalStateException(
                            "DDP: rank "
                                    + r
                                    + "'s parameter "
                                    + i
                                    + " is '"
                                    + b
                                    + "' (expected: rank 0's '"
                                    + a
                                    + "'; every rank must build the same model)");
                }
            }
        }
    }

    /**
     * Broadcasts arrays from rank 0, in place, all started before any is waited for. Every rank
     * must call it with the same arrays. It blocks until every broadcast has ended, even after one
     * failed: none writes into its array once this returns or throws.
     *
     * @param group the ranks
     * @param arrays the contiguous arrays the model trains; written in place, still owned by the
     *     caller
     * @throws RuntimeException the first failure, once every started broadcast has ended
     */
    public static void broadcast(ProcessGroup group, List<NDArray> arrays) {
        if (group.getSize() == 1) {
            return;
        }
        List<Work> works = new ArrayList<>(arrays.size());
        RuntimeException failure = null;
        try {
            for (NDArray a : arrays) {
                works.add(group.broadcastAsync(a, 0));
            }
        } catch (RuntimeException e) {
            failure = e;
        }
        // Every broadcast started is waited for, even after one failed: each writes into its
        // array until it ends, and the caller may close the model once this throws.
        for (Work w : works) {
            try {
                w.waitFor();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else if (!w.isCompleted()) {
                    // Gave up while it still runs: the caller must know. A later broadcast that
                    // failed because the group had failed is no news.
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
