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

import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.AbstractBlock;
import ai.djl.nn.Activation;
import ai.djl.nn.core.Linear;
import ai.djl.training.ParameterStore;
import ai.djl.util.PairList;

/**
 * A block whose parameters are used in another order than they are defined: {@code late} (defined
 * first) runs after {@code early}; {@code spare} is defined but never used.
 */
final class TwoPathBlock extends AbstractBlock {

    private final Linear late;
    private final Linear early;
    private final Linear spare;

    TwoPathBlock() {
        late = addChildBlock("late", Linear.builder().setUnits(Fixture.CLASSES).build());
        early = addChildBlock("early", Linear.builder().setUnits(16).build());
        spare = addChildBlock("spare", Linear.builder().setUnits(16).build());
    }

    @Override
    protected NDList forwardInternal(
            ParameterStore ps, NDList inputs, boolean training, PairList<String, Object> params) {
        NDList hidden = early.forward(ps, inputs, training, params);
        return late.forward(ps, new NDList(Activation.relu(hidden.head())), training, params);
    }

    @Override
    public Shape[] getOutputShapes(Shape[] inputShapes) {
        return new Shape[] {new Shape(inputShapes[0].get(0), Fixture.CLASSES)};
    }

    @Override
    protected void initializeChildBlocks(
            NDManager manager, DataType dataType, Shape... inputShapes) {
        early.initialize(manager, dataType, inputShapes);
        spare.initialize(manager, dataType, inputShapes);
        late.initialize(manager, dataType, new Shape(inputShapes[0].get(0), 16));
    }
}
