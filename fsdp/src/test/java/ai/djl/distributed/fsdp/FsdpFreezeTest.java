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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.training.Trainer;
import ai.djl.training.loss.Loss;
import ai.djl.util.Pair;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Freezing or unfreezing a parameter after FSDP sharded the model is refused by the next backward
 * pass or step, naming the parameter, as DDP refuses it: its units were laid out for what trained
 * then. A refusal changes nothing: restored, the model trains on as a plain trainer's does.
 */
@Timeout(180)
class FsdpFreezeTest {

    private static final int RANKS = 2;

    /** The MLP, with child {@code frozen} frozen (none when negative). */
    private static Block mlp(int frozen) {
        Block b = Fixture.mlp();
        if (frozen >= 0) {
            b.getChildren().get(frozen).getValue().freezeParameters(true);
        }
        return b;
    }

    /** Two steps of a plain DJL trainer on the ranks' concatenated batches. */
    private static Map<String, float[]> reference(int frozen) {
        try (Model model = Model.newInstance("mlp");
                NDManager m = NDManager.newBaseManager()) {
            model.setBlock(mlp(frozen));
            model.getBlock().initialize(model.getNDManager(), DataType.FLOAT32, new Shape(4, 6));
            try (Trainer t = model.newTrainer(Fixture.config(Fixture.adamW(), Loss.l2Loss()))) {
                for (int s = 0; s < 2; s++) {
                    Fixture.backward(t, Fixture.concatenatedRegression(m, s, RANKS));
                    t.step();
                }
            }
            return Fixture.snapshot(model.getBlock());
        }
    }

    /** Step 1 of a rank, run while trainability is changed and restored. */
    private interface Changes {

        /** Runs step 1 and returns the messages of the refusals it met. */
        List<String> run(FullyShardedDataParallel t, Block block, NDManager manager, int rank);
    }

    /**
     * Trains step 0, then step 1 through {@code changes}, under FSDP; returns rank 0's refusals and
     * every parameter's full value (the frozen ones read from the model).
     */
    private static Pair<List<String>, Map<String, float[]>> train(int frozen, Changes changes)
            throws Exception {
        return Fixture.ranks(
                        RANKS,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("mlp")) {
                                Block block = mlp(frozen);
                                model.setBlock(block);
                                try (FullyShardedDataParallel t =
                                        FullyShardedDataParallel.builder()
                                                .setModel(model)
                                                .setTrainingConfig(
                                                        Fixture.config(
                                                                Fixture.adamW(), Loss.l2Loss()))
                                                .setProcessGroup(group)
                                                .build()) {
                                    t.initialize(new Shape(4, 6));
                                    Fixture.backward(
                                            t, Fixture.regression(manager, 0, group.getRank()));
                                    t.step();
                                    List<String> refusals =
                                            changes.run(t, block, manager, group.getRank());
                                    Map<String, float[]> full = new LinkedHashMap<>();
                                    t.forEachFullParameter((n, a) -> full.put(n, a.toFloatArray()));
                                    for (Pair<String, Parameter> p : block.getParameters()) {
                                        if (!full.containsKey(p.getKey())) {
                                            full.put(
                                                    p.getKey(),
                                                    p.getValue().getArray().toFloatArray());
                                        }
                                    }
                                    return new Pair<>(refusals, full);
                                }
                            }
                        })
                .get(0);
    }

    private static void assertTrainsAsReference(int frozen, Map<String, float[]> actual) {
        Map<String, float[]> expected = reference(frozen);
        assertEquals(expected.keySet(), actual.keySet());
        for (String name : expected.keySet()) {
            double err = Fixture.relativeError(actual.get(name), expected.get(name));
            assertTrue(err <= 1e-5, name + ": " + err);
        }
    }

    @Test
    void freezingAParameterAfterShardingIsRefusedNamingIt() throws Exception {
        Pair<List<String>, Map<String, float[]>> run =
                train(
                        -1,
                        (t, block, manager, rank) -> {
                            Block last = block.getChildren().get(4).getValue();
                            // Frozen before the backward pass: it refuses, reducing nothing.
                            last.freezeParameters(true);
                            IllegalStateException backward =
                                    assertThrows(
                                            IllegalStateException.class,
                                            () ->
                                                    Fixture.backward(
                                                            t,
                                                            Fixture.regression(manager, 1, rank)));
                            last.freezeParameters(false);
                            // Frozen between the backward pass and the step: the step refuses.
                            Fixture.backward(t, Fixture.regression(manager, 1, rank));
                            last.freezeParameters(true);
                            IllegalStateException step =
                                    assertThrows(IllegalStateException.class, t::step);
                            last.freezeParameters(false);
                            t.step();
                            return List.of(backward.getMessage(), step.getMessage());
                        });
        String backward = run.getKey().get(0);
        assertTrue(
                backward.startsWith("backward: parameter 05Linear_weight was frozen after FSDP"),
                backward);
        String step = run.getKey().get(1);
        assertTrue(step.startsWith("step: parameter 05Linear_weight was frozen after FSDP"), step);
        assertTrainsAsReference(-1, run.getValue());
    }

    @Test
    void unfreezingAParameterAfterShardingIsRefusedNamingIt() throws Exception {
        Pair<List<String>, Map<String, float[]>> run =
                train(
                        0,
                        (t, block, manager, rank) -> {
                            Block first = block.getChildren().get(0).getValue();
                            first.freezeParameters(false);
                            IllegalStateException backward =
                                    assertThrows(
                                            IllegalStateException.class,
                                            () ->
                                                    Fixture.backward(
                                                            t,
                                                            Fixture.regression(manager, 1, rank)));
                            first.freezeParameters(true);
                            Fixture.backward(t, Fixture.regression(manager, 1, rank));
                            t.step();
                            return List.of(backward.getMessage());
                        });
        String backward = run.getKey().get(0);
        assertTrue(
                backward.startsWith("backward: parameter 01Linear_weight was unfrozen after FSDP"),
                backward);
        assertTrainsAsReference(0, run.getValue());
    }
}
