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
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Parameter;
import ai.djl.training.ParameterStore;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The parameter store an FSDP forward pass fetches parameters from: a sharded parameter is the view
 * of its unit's gathered buffer (and fails, naming it, when the unit is not gathered); any other
 * parameter (frozen ones, buffers) is DJL's usual array. Not thread-safe: the training thread uses
 * it.
 */
final class ShardedParameterStore extends ParameterStore {

    private final Map<String, int[]> slotById = new HashMap<>();
    private List<FlatUnit> units = List.of();
    private boolean trainingViews;

    ShardedParameterStore(NDManager manager) {
        super(manager, false);
    }

    /** Serves the units' parameters from now on. */
    void setUnits(List<FlatUnit> units) {
        this.units = units;
        slotById.clear();
        for (FlatUnit u : units) {
            List<Parameter> params = u.spec().parameters();
            for (int i = 0; i < params.size(); i++) {
                slotById.put(params.get(i).getId(), new int[] {u.index(), i});
            }
        }
    }

    /** Whether gathered views take gradients: true in training passes. */
    void setTrainingViews(boolean trainingViews) {
        this.trainingViews = trainingViews;
    }

    /** {@inheritDoc} */
    @Override
    public NDArray getValue(Parameter parameter, Device device, boolean training) {
        int[] slot = parameter == null ? null : slotById.get(parameter.getId());
        if (slot == null) {
            return super.getValue(parameter, device, training);
        }
        return units.get(slot[0]).view(slot[1], trainingViews);
    }
}
