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
