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

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.LambdaBlock;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.pytorch.jni.JniUtils;
import ai.djl.training.GradientCollector;
import ai.djl.training.loss.Loss;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/** What {@link StagedStep}'s segmented backward pass keeps alive from stage to stage. */
@Timeout(120)
class StagedStepTest {

    /**
     * With recompute, each stage's forward pass runs again in the backward pass, in a sub-manager
     * of the pass's manager: probes there count the arrays the pass holds (the stored stage inputs,
     * the probe's own input and the boundary gradients). Each stage's upstream gradient is freed
     * once that stage is backpropagated, so the count is the same at every probe, however far down
     * the stages the backward pass has come; it used to grow by a boundary's gradients per stage.
     */
    @ParameterizedTest
    @EnumSource(
            value = ShardingStrategy.class,
            names = {"FULL_SHARD", "SHARD_GRAD_OP"})
    void theBackwardPassHoldsOneBoundarysGradientsAtATime(ShardingStrategy strategy)
            throws Exception {
        AtomicBoolean backward = new AtomicBoolean();
        List<Integer> held = new ArrayList<>();
        SequentialBlock block = new SequentialBlock();
        for (int k = 0; k < 4; k++) {
            block.add(
                    new LambdaBlock(
                            x -> {
                                // grad mode on: the backward pass's recompute, not the forward
                                if (backward.get() && JniUtils.isGradMode()) {
                                    held.add(
                                            x.head()
                                                    .getManager()
                                                    .getParentManager()
                                                    .getManagedArrays()
                                                    .size());
                                }
                                return x;
                            }));
            block.add(Linear.builder().setUnits(k == 3 ? 5 : 8).build());
        }
        block.setInitializer(Fixture.deterministic(), p -> true);
        Fixture.ranks(
                1,
                (group, manager) -> {
                    try (Model model = Model.newInstance("staged")) {
                        model.setBlock(block);
                        try (FullyShardedDataParallel t =
                                FullyShardedDataParallel.builder()
                                        .optStrategy(strategy)
                                        .optActivationCheckpointing(true)
                                        .setModel(model)
                                        .setTrainingConfig(
                                                Fixture.config(Fixture.adamW(), Loss.l2Loss()))
                                        .setProcessGroup(group)
                                        .build()) {
                            t.initialize(new Shape(2, 6));
                            NDArray x = manager.ones(new Shape(2, 6));
                            NDArray y = manager.zeros(new Shape(2, 5));
                            try (GradientCollector c = t.newGradientCollector()) {
                                NDList out = t.forward(new NDList(x), new NDList(y));
                                backward.set(true);
                                c.backward(t.getLoss().evaluate(new NDList(y), out));
                            }
                        }
                    }
                    return null;
                });
        // the probes of stages 6, 4, 2 and 0 (stage 7, the last, records in the forward pass)
        assertEquals(4, held.size(), held.toString());
        for (int count : held) {
            assertEquals(held.get(0), count, "arrays the pass held at each probe: " + held);
        }
    }
}
