package ai.djl.distributed.ddp;

import ai.djl.Device;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Parameter;
import ai.djl.training.ParameterStore;

import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;
import java.util.function.IntConsumer;

/**
 * A {@link ParameterStore} that records which parameters a training forward pass fetches, and in
 * which order. DJL exposes no per-parameter autograd hooks, so this is DDP's view of the backward
 * pass: gradients become ready roughly in the reverse of the order parameters are first used, and a
 * parameter never fetched gets no gradient.
 */
final class RecordingParameterStore extends ParameterStore {

    private final Map<String, Integer> indexById = new HashMap<>();
    private IntConsumer beforeUse = i -> {};
    private int[] order = new int[0];
    private boolean[] seen = new boolean[0];
    private int count;

    RecordingParameterStore(NDManager manager) {
        super(manager, false);
    }

    /**
     * Sets the parameters to record, by index.
     *
     * @param ids the parameters' ids, in index order
     */
    void track(String[] ids) {
        indexById.clear();
        for (int i = 0; i < ids.length; i++) {
            indexById.put(ids[i], i);
        }
        order = new int[ids.length];
        seen = new boolean[ids.length];
        count = 0;
    }

    /**
     * Sets what runs before a tracked parameter is handed to a forward pass.
     *
     * @param beforeUse receives the parameter's index
     */
    void setBeforeUse(IntConsumer beforeUse) {
        this.beforeUse = beforeUse;
    }

    /** {@inheritDoc} */
    @Override
    public NDArray getValue(Parameter parameter, Device device, boolean training) {
        if (parameter != null) {
            Integer i = indexById.get(parameter.getId());
            if (i != null) {
                beforeUse.accept(i);
                if (training && !seen[i]) {
                    seen[i] = true;
                    order[count++] = i;
                }
            }
        }
        return super.getValue(parameter, device, training);
    }

    /**
     * Returns the array a parameter is trained as, without recording a use.
     *
     * @param parameter the parameter
     * @param device the training device
     * @return its array on the device
     */
    NDArray array(Parameter parameter, Device device) {
        return super.getValue(parameter, device, false);
    }

    /**
     * Returns the tracked parameters in the order of their first use since the last call, and
     * starts recording afresh.
     *
     * @return parameter indices; the unused ones are absent
     */
    int[] takeUseOrder() {
        int[] taken = Arrays.copyOf(order, count);
        Arrays.fill(seen, false);
        count = 0;
        return taken;
    }
}
