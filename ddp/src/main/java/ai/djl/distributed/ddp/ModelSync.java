package ai.djl.distributed.ddp;

import ai.djl.distributed.Work;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;
import ai.djl.nn.Parameter;
import ai.djl.nn.UninitializedParameterException;
import ai.djl.util.Pair;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * DDP's construction-time synchronization, as PyTorch's {@code _verify_model_across_ranks} and
 * {@code _sync_module_states}: every rank must have the same parameters (names, shapes, types,
 * whether they take gradients), and starts from rank 0's values, buffers included.
 */
final class ModelSync {

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
    record Layout(
            List<String> gradNames,
            Parameter[] grads,
            Parameter[] buffers,
            Parameter[] frozen,
            String signature) {}

    private ModelSync() {}

    /**
     * Splits a model's parameters.
     *
     * @param parameters the block's parameters, in definition order
     * @param value the array each parameter is trained as
     * @return the layout
     * @throws IllegalStateException naming a parameter that is not initialized
     */
    static Layout layout(
            Iterable<Pair<String, Parameter>> parameters, Function<Parameter, NDArray> value) {
        List<String> gradNames = new ArrayList<>();
        List<Parameter> grads = new ArrayList<>();
        List<Parameter> buffers = new ArrayList<>();
        List<Parameter> frozen = new ArrayList<>();
        StringBuilder signature = new StringBuilder();
        for (Pair<String, Parameter> pair : parameters) {
            Parameter p = pair.getValue();
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

    static boolean isRunningStatistic(Parameter.Type type) {
        return type == Parameter.Type.RUNNING_MEAN || type == Parameter.Type.RUNNING_VAR;
    }

    private static boolean isTrainableType(Parameter.Type type) {
        return type == Parameter.Type.WEIGHT
                || type == Parameter.Type.BIAS
                || type == Parameter.Type.GAMMA
                || type == Parameter.Type.BETA;
    }

    /**
     * Checks that every rank has rank 0's signature. Every rank must call it.
     *
     * @param group the ranks
     * @param signature this rank's signature
     * @throws IllegalStateException on every rank, naming the first rank and parameter that differ
     */
    static void verifyAcrossRanks(ProcessGroup group, String signature) {
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
     * must call it with the same arrays.
     *
     * @param group the ranks
     * @param arrays the contiguous arrays the model trains
     */
    static void broadcast(ProcessGroup group, List<NDArray> arrays) {
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
