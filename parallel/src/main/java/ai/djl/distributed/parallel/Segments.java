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

import ai.djl.engine.EngineException;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.pytorch.engine.PtNDArray;
import ai.djl.pytorch.jni.JniUtils;

/**
 * The pieces of a backward pass run segment by segment, stage after stage from the last, that DJL
 * has no hooks for: each stage's inputs are detached copies that take gradients, the gradient they
 * receive is the upstream gradient of the stage before, and the stage's graph is backpropagated
 * from it ({@code JniUtils.backward} with an explicit upstream gradient, PyTorch engine only).
 * Segment by segment the parameter gradients come out exactly as from one backward pass through the
 * whole graph, and each stage's are final when its segment is done: what FSDP reduces a unit at a
 * time and DDP can start reducing before the backward pass ends.
 *
 * <p>Stateless; arrays belong to the managers named.
 */
public final class Segments {

    private Segments() {}

    /**
     * Returns detached copies of arrays (sharing their memory), attached to a manager; the floating
     * ones take gradients if asked.
     *
     * @param arrays the arrays; unchanged
     * @param to the manager the copies are attached to
     * @param requiresGrad whether the floating copies take gradients
     * @return the copies
     */
    public static NDList detach(NDList arrays, NDManager to, boolean requiresGrad) {
        NDList out = new NDList(arrays.size());
        for (NDArray a : arrays) {
            NDArray d = a.stopGradient();
            d.attach(to);
            if (requiresGrad && d.getDataType().isFloating()) {
                d.setRequiresGradient(true);
            }
            out.add(d);
        }
        return out;
    }

    /**
     * Returns the gradients a stage's inputs received (null for an input that takes none).
     *
     * @param in the stage's inputs, as {@link #detach} made them
     * @param to the manager the gradients are attached to
     * @return one gradient or null per input
     */
    public static NDList gradients(NDList in, NDManager to) {
        NDList g = new NDList(in.size());
        for (NDArray a : in) {
            if (a.hasGradient()) {
                NDArray grad = a.getGradient();
                grad.attach(to);
                g.add(grad);
            } else {
                g.add(null);
            }
        }
        return g;
    }

    /**
     * Frees the gradients {@link #gradients} returned, once the stage they are the upstream
     * gradients of has been backpropagated ({@link #backwardThrough}): autograd holds no reference
     * to them afterwards, and nothing else reads them, so a segmented pass need keep only one
     * boundary's gradients alive, not one per stage until it ends.
     *
     * @param gradients the gradients (null entries allowed); closed
     */
    public static void free(NDList gradients) {
        for (NDArray g : gradients) {
            if (g != null) {
                g.close();
            }
        }
    }

    /**
     * Backpropagates from a loss: its gradient is one.
     *
     * @param loss the loss, recorded
     */
    public static void backwardFrom(NDArray loss) {
        try (NDArray ones = loss.onesLike()) {
            JniUtils.backward((PtNDArray) loss, (PtNDArray) ones, false, false);
        }
    }

    /**
     * Backpropagates upstream gradients through a stage's outputs. A result array's "requires grad"
     * flag reads false in DJL 0.35.1 even when it records (the JNI reports leaves only), so every
     * floating output with an upstream gradient takes part, and an output that depends on nothing
     * trainable (libtorch's "does not require grad") contributes nothing.
     *
     * @param out the stage's outputs, recorded
     * @param upstream one gradient (or null) per output
     * @throws IllegalStateException if the counts differ
     */
    public static void backwardThrough(NDList out, NDList upstream) {
        if (out.size() != upstream.size()) {
            throw new IllegalStateException(
                    "stage outputs: "
                            + out.size()
                            + " arrays (expected: as many as the next stage's inputs, "
                            + upstream.size()
                            + ")");
        }
        NDArray target = null;
        NDArray grad = null;
        int count = 0;
        for (int i = 0; i < out.size(); i++) {
            if (upstream.get(i) != null && out.get(i).getDataType().isFloating()) {
                count++;
                target = out.get(i);
                grad = upstream.get(i);
            }
        }
        if (count > 1) {
            // Several outputs: one backward through the sum of their products with their
            // upstream gradients, whose gradient is each upstream gradient.
            NDArray sum = null;
            for (int i = 0; i < out.size(); i++) {
                if (upstream.get(i) != null && out.get(i).getDataType().isFloating()) {
                    NDArray term = out.get(i).mul(upstream.get(i)).sum();
                    sum = sum == null ? term : sum.add(term);
                }
            }
            target = sum;
            grad = sum.onesLike();
        }
        if (count > 0) {
            try {
                JniUtils.backward((PtNDArray) target, (PtNDArray) grad, false, false);
            } catch (EngineException e) {
                if (e.getMessage() == null || !e.getMessage().contains("does not require grad")) {
                    throw e;
                }
            }
        }
    }
}
