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
package ai.djl.distributed.staged;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.LambdaBlock;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.ParameterStore;

import org.junit.jupiter.api.Test;

import java.util.List;

class StagesTest {

    @Test
    void aSequentialBlockRunsAsItsStages() {
        SequentialBlock inner = new SequentialBlock();
        inner.add(Linear.builder().setUnits(5).build()).add(Activation::tanh);
        SequentialBlock net = new SequentialBlock();
        net.add(Linear.builder().setUnits(6).build())
                .add(Activation::relu)
                .add(inner)
                .add(Linear.builder().setUnits(2).build());
        try (NDManager m = NDManager.newBaseManager()) {
            net.initialize(m, DataType.FLOAT32, new Shape(3, 4));
            NDArray x = m.randomNormal(new Shape(3, 4));
            ParameterStore ps = new ParameterStore(m, false);
            NDArray whole = net.forward(ps, new NDList(x), false).singletonOrThrow();

            List<Stage> stages = Stages.of(net).orElseThrow();
            // The nested sequence is expanded into its leaves.
            assertEquals(5, stages.size());
            assertEquals("03SequentialBlock.01Linear", stages.get(2).getName());
            NDList h = new NDList(x);
            for (Stage s : stages) {
                h = s.forward(ps, h, false);
            }
            assertArrayEquals(whole.toFloatArray(), h.singletonOrThrow().toFloatArray());
            // A stage that is a block lists that block's parameters.
            Block first = stages.get(0).getBlock();
            assertSame(net.getChildren().get(0).getValue(), first);
            assertEquals(2, stages.get(0).getParameters().size());
            assertTrue(stages.get(1).getParameters().isEmpty());
        }
    }

    @Test
    void aBlockWithoutAStagedFormHasNoStages() {
        assertTrue(Stages.of(new LambdaBlock(x -> x)).isEmpty());
        assertTrue(Stages.of(new SequentialBlock()).isEmpty());
    }

    @Test
    void aSequenceReturningItsIntermediatesIsNotChainedStageByStage() {
        // forward returns every child's outputs, not the last one's: no chain of stages gives it
        SequentialBlock all = new SequentialBlock().setReturnIntermediate(true);
        all.add(Linear.builder().setUnits(3).build()).add(Activation::relu);
        assertTrue(Stages.of(all).isEmpty());

        SequentialBlock inner = new SequentialBlock().setReturnIntermediate(true);
        inner.add(Linear.builder().setUnits(3).build()).add(Activation::relu);
        SequentialBlock net = new SequentialBlock();
        net.add(Linear.builder().setUnits(4).build()).add(inner);
        try (NDManager m = NDManager.newBaseManager()) {
            net.initialize(m, DataType.FLOAT32, new Shape(2, 5));
            NDArray x = m.randomNormal(new Shape(2, 5));
            ParameterStore ps = new ParameterStore(m, false);
            NDList whole = net.forward(ps, new NDList(x), false);
            assertEquals(2, whole.size()); // the inner sequence's two intermediates

            List<Stage> stages = Stages.of(net).orElseThrow();
            NDList h = new NDList(x);
            for (Stage s : stages) {
                h = s.forward(ps, h, false);
            }
            assertEquals(whole.size(), h.size());
            for (int i = 0; i < whole.size(); i++) {
                assertArrayEquals(whole.get(i).toFloatArray(), h.get(i).toFloatArray());
            }
        }
    }

    @Test
    void aNestedSequenceThatDeclaresItsStagesRunsThem() {
        // a SequentialBlock whose forward adds its input back; its declared stages say so
        final class Residual extends SequentialBlock implements StagedBlock {
            @Override
            protected NDList forwardInternal(
                    ParameterStore ps,
                    NDList in,
                    boolean training,
                    ai.djl.util.PairList<String, Object> params) {
                NDList out = super.forwardInternal(ps, in, training, params);
                return new NDList(out.singletonOrThrow().add(in.singletonOrThrow()));
            }

            @Override
            public List<Stage> getStages() {
                return List.of(
                        Stage.of(
                                "residual", this, (ps, in, training) -> forward(ps, in, training)));
            }
        }
        Residual residual = new Residual();
        residual.add(Linear.builder().setUnits(4).build());
        SequentialBlock net = new SequentialBlock();
        net.add(Linear.builder().setUnits(4).build()).add(residual);
        try (NDManager m = NDManager.newBaseManager()) {
            net.initialize(m, DataType.FLOAT32, new Shape(2, 4));
            NDArray x = m.randomNormal(new Shape(2, 4));
            ParameterStore ps = new ParameterStore(m, false);
            NDArray whole = net.forward(ps, new NDList(x), false).singletonOrThrow();
            List<Stage> stages = Stages.of(net).orElseThrow();
            assertEquals("02Residual.residual", stages.get(1).getName());
            NDList h = new NDList(x);
            for (Stage s : stages) {
                h = s.forward(ps, h, false);
            }
            assertArrayEquals(whole.toFloatArray(), h.singletonOrThrow().toFloatArray());
        }
    }

    @Test
    void aSequenceWhoseForwardIsOverriddenIsNotChainedStageByStage() {
        // a SequentialBlock subclass whose forward adds its input back, declaring no stages: its
        // children chained give something else than its forward
        final class Residual extends SequentialBlock {
            @Override
            protected NDList forwardInternal(
                    ParameterStore ps,
                    NDList in,
                    boolean training,
                    ai.djl.util.PairList<String, Object> params) {
                NDList out = super.forwardInternal(ps, in, training, params);
                return new NDList(out.singletonOrThrow().add(in.singletonOrThrow()));
            }
        }
        Residual top = new Residual();
        top.add(Linear.builder().setUnits(4).build());
        assertTrue(Stages.of(top).isEmpty());

        Residual residual = new Residual();
        residual.add(Linear.builder().setUnits(4).build()).add(Activation::relu);
        SequentialBlock net = new SequentialBlock();
        net.add(Linear.builder().setUnits(4).build()).add(residual);
        try (NDManager m = NDManager.newBaseManager()) {
            net.initialize(m, DataType.FLOAT32, new Shape(2, 4));
            NDArray x = m.randomNormal(new Shape(2, 4));
            ParameterStore ps = new ParameterStore(m, false);
            NDArray whole = net.forward(ps, new NDList(x), false).singletonOrThrow();
            // independently of the stages: the first Linear, then relu(Linear(h)) + h
            NDArray h0 =
                    net.getChildren()
                            .get(0)
                            .getValue()
                            .forward(ps, new NDList(x), false)
                            .singletonOrThrow();
            NDArray want =
                    residual.getChildren()
                            .get(0)
                            .getValue()
                            .forward(ps, new NDList(h0), false)
                            .singletonOrThrow()
                            .maximum(0)
                            .add(h0);
            assertArrayEquals(want.toFloatArray(), whole.toFloatArray(), 1e-6f);

            List<Stage> stages = Stages.of(net).orElseThrow();
            assertEquals(2, stages.size()); // the residual is one stage
            assertEquals("02Residual", stages.get(1).getName());
            NDList h = new NDList(x);
            for (Stage s : stages) {
                h = s.forward(ps, h, false);
            }
            assertArrayEquals(want.toFloatArray(), h.singletonOrThrow().toFloatArray(), 1e-6f);
        }
    }
}
