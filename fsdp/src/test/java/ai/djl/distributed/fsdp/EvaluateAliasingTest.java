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
package ai.djl.distributed.fsdp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import ai.djl.Model;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.LambdaBlock;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.Trainer;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.List;

/**
 * evaluate() releases a unit after its last stage, back to the pool, while the next stage still
 * reads that stage's outputs: when an output is a view of the unit's parameters (a learned prefix
 * handed on, ReshardAliasingTest's model), the prefetch of the next unit of the same length
 * all-gathers into that very buffer under the reader. The stage after each prefix takes a moment
 * (as any real block does) so that the gather lands before it reads.
 */
@Timeout(120)
class EvaluateAliasingTest {

    private static NDList slowSum(NDList x) {
        try {
            Thread.sleep(200);
        } catch (InterruptedException e) {
            throw new IllegalStateException(e);
        }
        return new NDList(x.get(0).add(x.get(1)).tanh());
    }

    private static Block model() {
        Block b =
                new SequentialBlock()
                        .add(Linear.builder().setUnits(6).build())
                        .add(new ReshardAliasingTest.Prefix())
                        .add(new LambdaBlock(EvaluateAliasingTest::slowSum))
                        .add(new ReshardAliasingTest.Prefix())
                        .add(new LambdaBlock(x -> new NDList(x.get(0).mul(x.get(1)).tanh())))
                        .add(Linear.builder().setUnits(5).build());
        b.setInitializer(Fixture.deterministic(), p -> true);
        return b;
    }

    @ParameterizedTest
    @EnumSource(
            value = ShardingStrategy.class,
            names = {"FULL_SHARD", "SHARD_GRAD_OP"})
    void evaluateOfAStageHandingOnAViewOfItsParametersIsAPlainTrainers(ShardingStrategy strategy)
            throws Exception {
        float[] expected;
        try (Model model = Model.newInstance("plain");
                NDManager m = NDManager.newBaseManager()) {
            model.setBlock(model());
            try (Trainer t = model.newTrainer(ReshardAliasingTest.config())) {
                t.initialize(new Shape(2, 6));
                for (int s = 0; s < 3; s++) { // the two prefixes, alike at first, differ after
                    Fixture.backward(t, ReshardAliasingTest.batch(m));
                    t.step();
                }
                expected = t.evaluate(ReshardAliasingTest.batch(m)[0]).head().toFloatArray();
            }
        }
        List<float[]> actual =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("fsdp")) {
                                model.setBlock(model());
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .optStrategy(strategy)
                                                .setModel(model)
                                                .setTrainingConfig(ReshardAliasingTest.config())
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(2, 6));
                                    for (int s = 0; s < 3; s++) {
                                        Fixture.backward(t, ReshardAliasingTest.batch(manager));
                                        t.step();
                                    }
                                    return t.evaluate(ReshardAliasingTest.batch(manager)[0])
                                            .head()
                                            .toFloatArray();
                                }
                            }
                        });
        for (float[] a : actual) {
            assertArrayEquals(expected, a, 1e-6f);
        }
    }
}
