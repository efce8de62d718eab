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
 * which order. DJL exposes no per-parameter autograd hooks, so this is a data-parallel trainer's
 * view of the backward pass: gradients become ready roughly in the reverse of the order parameters
 * are first used, and a parameter never fetched gets no gradient. It also lets the trainer act just
 * before a parameter is used ({@link #setBeforeUse}): DDP completes the pending update of that
 * parameter's bucket there, FSDP would gather the parameter's shard.
 *
 * <p>A trainer passes it to {@code block.forward(store, ...)} in place of DJL's own store. Not
 * thread-safe: one training thread uses it. The arrays it returns are the parameters' own (or their
 * device copies, as DJL's store makes them), owned by the parameters.
 */
public final class RecordingParameterStore extends ParameterStore {

    private final Map<String, Integer> indexById = new HashMap<>();
    private IntConsumer beforeUse = i -> {};
    private int[] order = new int[0];
    private boolean[] seen = new boolean[0];
    private int count;

    /**
     * Creates a store that records nothing until {@link #track} names the parameters.
     *
     * @param manager owns the device copies of parameters that live on another device
     */
    public RecordingParameterStore(NDManager manager) {
        super(manager, false);
    }

    /**
     * Sets the parameters to record, by index, and forgets what was recorded.
     *
     * @param ids the parameters' ids ({@link Parameter#getId()}), in index order; parameters not
     *     named are handed out without being recorded
     */
    public void track(String[] ids) {
        indexById.clear();
        for (int i = 0; i < ids.length; i++) {
            indexById.put(ids[i], i);
        }
        order = new int[ids.length];
        seen = new boolean[ids.length];
        count = 0;
    }

    /**
     * Sets what runs before a tracked parameter is handed to a forward pass (training or not), on
     * the thread running the forward pass; it may block (to wait for the parameter's update).
     *
     * @param beforeUse receives the parameter's index; runs on every fetch, not only the first
     */
    public void setBeforeUse(IntConsumer beforeUse) {
        this.beforeUse = beforeUse;
    }

    /**
     * Returns a parameter's array for a forward pass, as DJL's store does; first runs the
     * before-use action for a tracked parameter and, in a training pass, records its first use.
     *
     * @param parameter the parameter (null gives what DJL's store gives)
     * @param device the device the pass runs on
     * @param training whether the pass is a training one
     * @return the array, owned by the parameter (or the store, for a device copy)
     */
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
     * Returns the array a parameter is trained as, without recording a use or running the
     * before-use action.
     *
     * @param parameter the parameter
     * @param device the training device
     * @return its array on the device: the parameter's own, or the store's copy on that device
     */
    public NDArray array(Parameter parameter, Device device) {
        return super.getValue(parameter, device, false);
    }

    /**
     * Returns the tracked parameters in the order of their first use since the last call, and
     * starts recording afresh.
     *
     * @return parameter indices; the unused ones are absent; only training passes count
     */
    public int[] takeUseOrder() {
        int[] taken = Arrays.copyOf(order, count);
        Arrays.fill(seen, false);
        count = 0;
        return taken;
    }
}
