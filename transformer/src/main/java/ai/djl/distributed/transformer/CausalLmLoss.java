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
import ai.djl.ndarray.types.Shape;
import ai.djl.training.loss.Loss;

/**
 * The language-modelling loss: the mean, over every position of every sequence, of the
 * cross-entropy (in nats) between the predicted next-token distribution and the actual next token.
 * PyTorch's {@code F.cross_entropy(logits.reshape(-1, V), targets.reshape(-1))}.
 *
 * <p>Labels: the target ids {@code (batch, time)}, INT64. Predictions: the logits {@code (batch,
 * time, vocabSize)}: the labels' shape must be the predictions' without the last axis (as {@code
 * F.cross_entropy} requires of the flattened pair).
 */
public final class CausalLmLoss extends Loss {

    /** Creates the loss, named {@code "CausalLmLoss"}. */
    public CausalLmLoss() {
        super("CausalLmLoss");
    }

    /**
     * {@inheritDoc}
     *
     * @throws IllegalArgumentException if the labels' shape is not the predictions' without the
     *     last axis
     */
    @Override
    public NDArray evaluate(NDList labels, NDList predictions) {
        NDArray logits = predictions.head();
        NDArray ids = labels.head();
        Shape shape = logits.getShape();
        // gather accepts an index smaller than its input along every axis: a label array that is
        // too short (a batch or a sequence) would pick some positions' logits and ignore others
        if (shape.dimension() < 1
                || !ids.getShape().equals(shape.slice(0, shape.dimension() - 1))) {
            throw new IllegalArgumentException(
                    "labels: shape "
                            + ids.getShape()
                            + " (expected: "
                            + shape.slice(0, Math.max(0, shape.dimension() - 1))
                            + ", the predictions' "
                            + shape
                            + " without the vocabulary axis)");
        }
        NDArray logProbs = logits.logSoftmax(-1);
        NDArray targets = ids.expandDims(-1);
        return logProbs.gather(targets, -1).mean().neg();
    }
}
