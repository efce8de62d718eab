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

import ai.djl.distributed.staged.Stage;
import ai.djl.distributed.staged.StagedBlock;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.ndarray.types.SparseFormat;
import ai.djl.nn.AbstractBlock;
import ai.djl.nn.Parameter;
import ai.djl.nn.core.Linear;
import ai.djl.nn.norm.LayerNorm;
import ai.djl.training.ParameterStore;
import ai.djl.training.initializer.NormalInitializer;
import ai.djl.util.PairList;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * A GPT-style decoder as a DJL block: token and position embeddings, {@link GptBlock}s, a final
 * LayerNorm and a language-model head tied to the token embedding ({@code logits = x E^T}).
 *
 * <p>Input: token ids {@code (batch, time)} of an integer type, {@code time <= contextLength}.
 * Output: logits {@code (batch, time, vocabSize)}; position {@code t} depends only on tokens {@code
 * 0..t}. Initialised as GPT-2: every weight from N(0, 0.02), the two residual projections of each
 * block from N(0, 0.02 / sqrt(2 layers)), biases and LayerNorm shifts 0, LayerNorm scales 1.
 *
 * <p>It trains like any DJL block ({@code Model.setBlock}, {@code Trainer}, a {@link CausalLmLoss})
 * and generates through {@link #forwardCached} with a {@link KvCache}.
 *
 * <p>Its {@linkplain #getStages() stages} are the embedding, each block, and the head (final
 * LayerNorm and the tied projection): the form fully sharded data parallelism runs block by block.
 * The token embedding belongs to the first and the last stage.
 */
public final class GptModel extends AbstractBlock implements StagedBlock {

    private static final byte VERSION = 1;
    private static final float INIT_STD = 0.02f;

    private final GptConfig config;
    private final Parameter tokenEmbedding;
    private final Parameter positionEmbedding;
    private final List<GptBlock> blocks;
    private final LayerNorm lnFinal;
    private final List<Stage> stages;

    /**
     * Creates an uninitialised model; DJL initialises it ({@code Trainer.initialize} or {@link
     * #initialize}) or loads its parameters.
     *
     * @param config the model's shape
     */
    public GptModel(GptConfig config) {
        super(VERSION);
        this.config = config;
        tokenEmbedding =
                addParameter(
                        Parameter.builder()
                                .setName("tokenEmbedding")
                                .setType(Parameter.Type.WEIGHT)
                                .optShape(new Shape(config.getVocabSize(), config.getWidth()))
                                .build());
        positionEmbedding =
                addParameter(
                        Parameter.builder()
                                .setName("positionEmbedding")
                                .setType(Parameter.Type.WEIGHT)
                                .optShape(new Shape(config.getContextLength(), config.getWidth()))
                                .build());
        List<GptBlock> list = new ArrayList<>();
        for (int i = 0; i < config.getLayers(); i++) {
            list.add(addChildBlock("block" + i, new GptBlock(config)));
        }
        blocks = Collections.unmodifiableList(list);
        lnFinal = addChildBlock("lnFinal", GptBlock.layerNorm(config));

        setInitializer(new NormalInitializer(INIT_STD), Parameter.Type.WEIGHT);
        NormalInitializer residual =
                new NormalInitializer((float) (INIT_STD / Math.sqrt(2.0 * config.getLayers())));
        for (GptBlock block : blocks) {
            block.attention().outputProjection().setInitializer(residual, Parameter.Type.WEIGHT);
            block.mlp().outputProjection().setInitializer(residual, Parameter.Type.WEIGHT);
        }
        stages = Collections.unmodifiableList(buildStages());
    }

    private List<Stage> buildStages() {
        List<Stage> list = new ArrayList<>();
        list.add(
                Stage.of(
                        "embed",
                        List.of(tokenEmbedding, positionEmbedding),
                        (ps, in, training) -> {
                            NDArray tokens = in.head();
                            checkLength(tokens, 0);
                            return new NDList(embed(ps, tokens, 0, training));
                        }));
        for (int i = 0; i < blocks.size(); i++) {
            GptBlock block = blocks.get(i);
            int layer = i;
            list.add(
                    Stage.of(
                            "block" + i,
                            block,
                            (ps, in, training) -> {
                                NDArray x = in.head();
                                int n = (int) x.getShape().get(1);
                                NDArray mask =
                                        Ops.causalMask(x.getManager(), n, 0, x.getDataType());
                                return new NDList(block.apply(ps, x, mask, training, null, layer));
                            }));
        }
        List<Parameter> headParams = new ArrayList<>();
        lnFinal.getParameters().forEach(p -> headParams.add(p.getValue()));
        headParams.add(tokenEmbedding);
        list.add(
                Stage.of(
                        "head",
                        headParams,
                        (ps, in, training) -> new NDList(head(ps, in.head(), training))));
        return list;
    }

    /**
     * Returns the model's configuration.
     *
     * @return the configuration
     */
    public GptConfig getConfig() {
        return config;
    }

    /**
     * Returns the stages: {@code embed} (token ids to the embedded sequence), {@code block0} to
     * {@code block<layers-1>}, and {@code head} (to logits); each passes one array, {@code (batch,
     * time, width)}, to the next.
     *
     * @return the stages, in order
     */
    @Override
    public List<Stage> getStages() {
        return stages;
    }

    /** {@inheritDoc} */
    @Override
    protected NDList forwardInternal(
            ParameterStore ps, NDList inputs, boolean training, PairList<String, Object> params) {
        NDArray tokens = inputs.head();
        int n = checkLength(tokens, 0);
        NDArray x = embed(ps, tokens, 0, training);
        NDArray mask = Ops.causalMask(tokens.getManager(), n, 0, x.getDataType());
        for (int i = 0; i < blocks.size(); i++) {
            x = blocks.get(i).apply(ps, x, mask, training, null, i);
        }
        return new NDList(head(ps, x, training));
    }

    /**
     * Reads new tokens that follow the positions in the cache, appends their keys and values to it,
     * and returns their logits. Runs without gradients (inference).
     *
     * @param ps the parameter store
     * @param tokens the new token ids, {@code (batch, n)}
     * @param cache the cache of this sequence so far; {@code cache.length() + n} must not exceed
     *     the context length
     * @return the logits of the new positions, {@code (batch, n, vocabSize)}
     * @throws IllegalArgumentException if the sequence would exceed the context length
     */
    public NDArray forwardCached(ParameterStore ps, NDArray tokens, KvCache cache) {
        int offset = cache.length();
        int n = checkLength(tokens, offset);
        NDArray x = embed(ps, tokens, offset, false);
        NDArray mask =
                n == 1 ? null : Ops.causalMask(tokens.getManager(), n, offset, x.getDataType());
        try {
            for (int i = 0; i < blocks.size(); i++) {
                x = blocks.get(i).apply(ps, x, mask, false, cache, i);
            }
        } catch (RuntimeException | Error e) {
            cache.rollBack(); // the layers before the failure appended these positions already
            throw e;
        }
        cache.advance(n);
        return head(ps, x, false);
    }

    private int checkLength(NDArray tokens, int offset) {
        Shape shape = tokens.getShape();
        if (shape.dimension() != 2) {
            throw new IllegalArgumentException(
                    "tokens: shape " + shape + " (expected: (batch, time))");
        }
        long end = offset + shape.get(1);
        if (shape.get(1) < 1 || end > config.getContextLength()) {
            throw new IllegalArgumentException(
                    "tokens: "
                            + shape.get(1)
                            + " after "
                            + offset
                            + " cached (expected: 1 to "
                            + (config.getContextLength() - offset)
                            + ", the context length being "
                            + config.getContextLength()
                            + ")");
        }
        return (int) shape.get(1);
    }

    private NDArray embed(ParameterStore ps, NDArray tokens, int offset, boolean training) {
        NDArray tok = ps.getValue(tokenEmbedding, tokens.getDevice(), training);
        NDArray pos = ps.getValue(positionEmbedding, tokens.getDevice(), training);
        long n = tokens.getShape().get(1);
        NDArray positions = tokens.getManager().arange(offset, offset + n, 1, DataType.INT64);
        NDArray x = embedding(tokens, tok).add(embedding(positions, pos));
        return Ops.dropout(x, config.getDropout(), training);
    }

    private static NDArray embedding(NDArray ids, NDArray weight) {
        return ids.getNDArrayInternal()
                .embedding(ids, weight, SparseFormat.DENSE)
                .singletonOrThrow();
    }

    private NDArray head(ParameterStore ps, NDArray x, boolean training) {
        NDArray h = lnFinal.forward(ps, new NDList(x), training).singletonOrThrow();
        NDArray tok = ps.getValue(tokenEmbedding, x.getDevice(), training);
        return Linear.linear(h, tok).singletonOrThrow();
    }

    /** {@inheritDoc} */
    @Override
    public Shape[] getOutputShapes(Shape[] inputShapes) {
        Shape in = inputShapes[0];
        return new Shape[] {new Shape(in.get(0), in.get(1), config.getVocabSize())};
    }

    /** {@inheritDoc} */
    @Override
    protected void initializeChildBlocks(
            NDManager manager, DataType dataType, Shape... inputShapes) {
        Shape in = inputShapes[0];
        Shape x = new Shape(in.get(0), in.get(1), config.getWidth());
        Shape mask = new Shape(in.get(1), in.get(1));
        for (GptBlock block : blocks) {
            block.initialize(manager, dataType, x, mask);
        }
        lnFinal.initialize(manager, dataType, x);
    }
}
