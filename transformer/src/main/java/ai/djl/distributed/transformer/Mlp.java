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
package ai.djl.distributed.transformer;

import ai.djl.ndarray.NDArray;
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
 * The feed-forward half of a transformer block: {@code out(gelu(fc(x)))}, with a hidden layer
 * {@link GptConfig#getMlpRatio()} times wider than the model and the exact (erf) GELU, as PyTorch's
 * {@code F.gelu}.
 *
 * <p>Input and output are {@code (batch, time, width)}.
 */
public final class Mlp extends AbstractBlock {

    private static final byte VERSION = 1;

    private final Linear fc;
    private final Linear out;
    private final float dropout;

    /**
     * Creates the MLP of one block.
     *
     * @param config the model's configuration
     */
    public Mlp(GptConfig config) {
        super(VERSION);
        long hidden = (long) config.getWidth() * config.getMlpRatio();
        fc = addChildBlock("fc", Linear.builder().setUnits(hidden).build());
        out = addChildBlock("out", Linear.builder().setUnits(config.getWidth()).build());
        dropout = config.getDropout();
    }

    /**
     * Returns the output projection, whose initial weights GPT-2 scales down with depth.
     *
     * @return the output linear layer
     */
    Linear outputProjection() {
        return out;
    }

    /**
     * Applies the MLP.
     *
     * @param ps the parameter store
     * @param x the input, {@code (batch, time, width)}
     * @param training whether to apply dropout
     * @return the output, {@code (batch, time, width)}
     */
    NDArray apply(ParameterStore ps, NDArray x, boolean training) {
        Shape shape = x.getShape();
        // on (batch * time, width): libtorch fuses each bias into its matrix product (addmm)
        NDArray flat = x.reshape(shape.get(0) * shape.get(1), shape.get(2));
        NDArray h = Activation.gelu(fc.forward(ps, new NDList(flat), training).singletonOrThrow());
        NDArray y = out.forward(ps, new NDList(h), training).singletonOrThrow();
        return Ops.dropout(y, dropout, training).reshape(shape);
    }

    /** {@inheritDoc} */
    @Override
    protected NDList forwardInternal(
            ParameterStore ps, NDList inputs, boolean training, PairList<String, Object> params) {
        return new NDList(apply(ps, inputs.head(), training));
    }

    /** {@inheritDoc} */
    @Override
    public Shape[] getOutputShapes(Shape[] inputShapes) {
        return new Shape[] {inputShapes[0]};
    }

    /** {@inheritDoc} */
    @Override
    protected void initializeChildBlocks(
            NDManager manager, DataType dataType, Shape... inputShapes) {
        Shape x = inputShapes[0];
        fc.initialize(manager, dataType, x);
        out.initialize(manager, dataType, fc.getOutputShapes(new Shape[] {x}));
    }
}
