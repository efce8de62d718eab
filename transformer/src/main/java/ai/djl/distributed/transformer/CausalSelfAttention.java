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
import ai.djl.nn.core.Linear;
import ai.djl.training.ParameterStore;
import ai.djl.util.PairList;

/**
 * Multi-head causal self-attention: one linear layer makes queries, keys and values, each head
 * attends to the positions at or before its own, and a linear layer projects the heads back.
 *
 * <p>The operations are those of PyTorch's reference {@code q @ k^T / sqrt(d_head)}, masked,
 * softmax, {@code @ v}, as the benchmark peer computes them. Inputs are {@code x (batch, time,
 * width)} and the additive mask of {@link Ops#causalMask}; with a {@link KvCache} the keys and
 * values of earlier positions come from the cache and the new ones are appended to it.
 */
public final class CausalSelfAttention extends AbstractBlock {

    private static final byte VERSION = 1;

    private final Linear qkv;
    private final Linear proj;
    private final int heads;
    private final int headWidth;

    /**
     * 1 / sqrt(headWidth), multiplied by as a tensor that libtorch allocates: DJL's {@code
     * mul(Number)} wraps the number in a tensor over a Java buffer that it releases on return,
     * while autograd keeps that tensor for the backward pass (a use-after-free once the buffer is
     * collected and its memory reused).
     */
    private final float scale;

    private final float dropout;

    /**
     * Creates the attention of one block.
     *
     * @param config the model's configuration
     */
    public CausalSelfAttention(GptConfig config) {
        super(VERSION);
        qkv = addChildBlock("qkv", Linear.builder().setUnits(3L * config.getWidth()).build());
        proj = addChildBlock("proj", Linear.builder().setUnits(config.getWidth()).build());
        heads = config.getHeads();
        headWidth = config.getHeadWidth();
        scale = (float) (1 / Math.sqrt(headWidth));
        dropout = config.getDropout();
    }

    /**
     * Returns the output projection, whose initial weights GPT-2 scales down with depth.
     *
     * @return the output linear layer
     */
    Linear outputProjection() {
        return proj;
    }

    /**
     * Attends.
     *
     * @param ps the parameter store
     * @param x the input, {@code (batch, n, width)}
     * @param mask the additive mask {@code (n, cached + n)}, or null when {@code n} is 1
     * @param training whether to apply dropout
     * @param cache the cache of earlier keys and values, or null to attend within {@code x} only
     * @param layer this block's index in the cache
     * @return the output, {@code (batch, n, width)}
     */
    NDArray apply(
            ParameterStore ps,
            NDArray x,
            NDArray mask,
            boolean training,
            KvCache cache,
            int layer) {
        Shape shape = x.getShape();
        long batch = shape.get(0);
        long n = shape.get(1);
        long width = (long) heads * headWidth;
        // Linear layers on (batch * n, width): libtorch then fuses the bias into the matrix
        // product (addmm), as torch.nn.Linear does for 3-d input; DJL's linear does not for 3-d.
        NDArray flat = x.reshape(batch * n, width);
        NDList parts = qkv.forward(ps, new NDList(flat), training).singletonOrThrow().split(3, 1);
        // (batch * n, width) -> (batch, heads, n, headWidth) for each of q, k, v
        NDArray q = splitHeads(parts.get(0), batch, n);
        NDArray k = splitHeads(parts.get(1), batch, n);
        NDArray v = splitHeads(parts.get(2), batch, n);
        if (cache != null) {
            NDArray[] kv = cache.append(layer, k, v);
            k = kv[0];
            v = kv[1];
        }
        NDArray keysT = k.swapAxes(2, 3);
        // q k^T / sqrt(headWidth), with the queries scaled: the same product, and a quarter of
        // the elementwise work when n is 4 head widths
        NDArray att = q.mul(q.getManager().full(new Shape(), scale, q.getDataType())).matMul(keysT);
        if (cache != null) {
            keysT.close(); // a view on the cache's manager: do not let it live as long as the cache
        }
        if (mask != null) {
            att = att.add(mask);
        }
        att = Ops.dropout(att.softmax(-1), dropout, training);
        NDArray y = att.matMul(v).swapAxes(1, 2).reshape(batch * n, width);
        y = proj.forward(ps, new NDList(y), training).singletonOrThrow();
        return Ops.dropout(y, dropout, training).reshape(batch, n, width);
    }

    private NDArray splitHeads(NDArray t, long batch, long n) {
        return t.reshape(batch, n, heads, headWidth).swapAxes(1, 2);
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
        qkv.initialize(manager, dataType, inputShapes[0]);
        proj.initialize(manager, dataType, inputShapes[0]);
    }
}
