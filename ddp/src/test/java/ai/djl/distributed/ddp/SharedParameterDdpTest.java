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
package ai.djl.distributed.ddp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Activation;
import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.nn.core.Linear;
import ai.djl.training.Trainer;
import ai.djl.training.optimizer.Optimizer;
import ai.djl.training.tracker.Tracker;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * A block used twice in one model (weight sharing): DJL lists its parameters once per use, under
 * two names, but they are one parameter, which DJL's trainer (and PyTorch's DDP, which deduplicates
 * shared parameters) updates once per step from the gradient summed over both uses.
 */
@Timeout(60)
class SharedParameterDdpTest {

    private static final int BATCH = 4;
    private static final int STEPS = 3;

    private record Run(Map<String, float[]> initial, Map<String, float[]> last) {}

    /** 8 -> 8 (shared) -> 8 (the same layer again) -> 4. */
    private static Block sharedMlp() {
        Linear shared = Linear.builder().setUnits(Fixture.IN).build();
        return new SequentialBlock()
                .add(shared)
                .add(Activation::relu)
                .add(shared)
                .add(Activation::relu)
                .add(Linear.builder().setUnits(Fixture.CLASSES).build());
    }

    private static Optimizer plainSgd() {
        return Optimizer.sgd().setLearningRateTracker(Tracker.fixed(0.1f)).build();
    }

    @Test
    void aParameterSharedByTwoLayersIsUpdatedOncePerStep() throws Exception {
        List<Run> runs =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                model.setBlock(sharedMlp());
                                try (DistributedDataParallel t =
                                        Fixture.ddp(
                                                model,
                                                group,
                                                SharedParameterDdpTest::plainSgd,
                                                DistributedDataParallel.builder(),
                                                BATCH)) {
                                    Map<String, float[]> initial =
                                            Fixture.snapshot(model.getBlock());
                                    for (int s = 0; s < STEPS; s++) {
                                        Fixture.step(t, manager, s, group.getRank(), BATCH);
                                    }
                                    return new Run(initial, Fixture.snapshot(model.getBlock()));
                                }
                            }
                        });
        Map<String, float[]> initial = runs.get(0).initial();
        // the shared layer is listed twice, as DJL names each use
        assertEquals(
                List.of(
                        "01Linear_weight",
                        "01Linear_bias",
                        "03Linear_weight",
                        "03Linear_bias",
                        "05Linear_weight",
                        "05Linear_bias"),
                List.copyOf(initial.keySet()));
        // Single-process DJL training on the ranks' concatenated batches, from the same values.
        Map<String, float[]> expected;
        try (Model model = Model.newInstance("reference");
                NDManager manager = NDManager.newBaseManager()) {
            model.setBlock(sharedMlp());
            try (Trainer trainer = model.newTrainer(Fixture.config(plainSgd()))) {
                trainer.initialize(new Shape(2 * BATCH, Fixture.IN));
                Fixture.load(model.getBlock(), initial, manager);
                for (int s = 0; s < STEPS; s++) {
                    try (NDManager m = manager.newSubManager()) {
                        Fixture.backward(trainer, Fixture.concatenated(m, s, 2, BATCH));
                        trainer.step();
                    }
                }
            }
            expected = Fixture.snapshot(model.getBlock());
        }
        assertFalse(Arrays.equals(initial.get("01Linear_weight"), expected.get("01Linear_weight")));
        for (Run run : runs) {
            Fixture.assertClose(expected, run.last(), 1e-5);
        }
    }
}
