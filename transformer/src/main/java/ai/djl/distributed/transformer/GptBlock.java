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
import ai.djl.nn.norm.LayerNorm;
import ai.djl.training.ParameterStore;
import ai.djl.util.PairList;

/**
 * One pre-LayerNorm transformer block: {@code x + attn(ln1(x))}, then {@code x + mlp(ln2(x))}.
 *
 * <p>Inputs are {@code x (batch, time, width)} and the additive causal mask {@code (time, time)};
 * the output has the shape of {@code x}.
 */
public final class GptBlock extends AbstractBlock {

    private static final byte VERSION = 1;

    private final LayerNorm ln1;
    private final CausalSelfAttention attention;
    private final LayerNorm ln2;
    private final Mlp mlp;

    /**
     * Creates a block.
     *
     * @param config the model's configuration
     */
    public GptBlock(GptConfig config) {
        super(VERSION);
        ln1 = addChildBlock("ln1", layerNorm(config));
        attention = addChildBlock("attn", new CausalSelfAttention(config));
        ln2 = addChildBlock("ln2", layerNorm(config));
        mlp = addChildBlock("mlp", new Mlp(config));
    }

    static LayerNorm layerNorm(GptConfig config) {
        // axis 2 of (batch, time, width): the width, as nn.LayerNorm(width)
        return LayerNorm.builder().axis(2).optEpsilon(config.getLayerNormEps()).build();
    }

    /**
     * Returns the attention of this block.
     *
     * @return the attention
     */
    CausalSelfAttention attention() {
        return attention;
    }

    /**
     * Returns the MLP of this block.
     *
     * @return the MLP
     */
    Mlp mlp() {
        return mlp;
    }

    /**
     * Applies the block.
     *
     * @param ps the parameter store
     * @param x the input, {@code (batch, n, width)}
     * @param mask the additive mask, or null when {@code n} is 1
     * @param training whether to apply dropout
     * @param cache the key-value cache, or null
     * @param layer this block's index
     * @return the output, {@code (batch, n, width)}
     */
    NDArray apply(
            ParameterStore ps,
            NDArray x,
            NDArray mask,
            boolean training,
            KvCache cache,
            int layer) {
        NDArray h = ln1.forward(ps, new NDList(x), training).singletonOrThrow();
        x = x.add(attention.apply(ps, h, mask, training, cache, layer));
        h = ln2.forward(ps, new NDList(x), training).singletonOrThrow();
        return x.add(mlp.apply(ps, h, training));
    }

    /** {@inheritDoc} */
    @Override
    protected NDList forwardInternal(
            ParameterStore ps, NDList inputs, boolean training, PairList<String, Object> params) {
        NDArray mask = inputs.size() > 1 ? inputs.get(1) : null;
        return new NDList(apply(ps, inputs.head(), mask, training, null, 0));
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
        ln1.initialize(manager, dataType, x);
        attention.initialize(manager, dataType, inputShapes);
        ln2.initialize(manager, dataType, x);
        mlp.initialize(manager, dataType, x);
    }
}
