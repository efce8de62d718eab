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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;

class CausalLmLossTest {

    @Test
    void meanCrossEntropyOverEveryPosition() {
        try (NDManager m = NDManager.newBaseManager()) {
            float[] logits = new float[2 * 3 * 4];
            for (int i = 0; i < logits.length; i++) {
                logits[i] = (float) Math.sin(i * 0.7) * 2;
            }
            long[] targets = {0, 3, 1, 2, 2, 0};
            double expected = 0;
            for (int p = 0; p < 6; p++) {
                double sum = 0;
                for (int v = 0; v < 4; v++) {
                    sum += Math.exp(logits[p * 4 + v]);
                }
                expected += Math.log(sum) - logits[p * 4 + (int) targets[p]];
            }
            expected /= 6;
            NDArray loss =
                    new CausalLmLoss()
                            .evaluate(
                                    new NDList(m.create(targets, new Shape(2, 3))),
                                    new NDList(m.create(logits, new Shape(2, 3, 4))));
            assertEquals(expected, loss.getFloat(), 1e-5);
        }
    }

    @Test
    void refusesLabelsOfAnotherShape() {
        try (NDManager m = NDManager.newBaseManager()) {
            NDList logits = new NDList(m.zeros(new Shape(2, 4, 5)));
            CausalLmLoss loss = new CausalLmLoss();
            // a sequence too short, a batch too small: gather would read a corner of the logits
            for (Shape wrong : new Shape[] {new Shape(2, 3), new Shape(1, 4), new Shape(8)}) {
                NDList labels = new NDList(m.zeros(wrong, DataType.INT64));
                IllegalArgumentException e =
                        assertThrows(
                                IllegalArgumentException.class,
                                () -> loss.evaluate(labels, logits));
                assertEquals(
                        "labels: shape "
                                + wrong
                                + " (expected: (2, 4), the predictions' (2, 4, 5) without the"
                                + " vocabulary axis)",
                        e.getMessage());
            }
        }
    }
}
