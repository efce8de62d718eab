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

import ai.djl.distributed.staged.Stage;
import ai.djl.distributed.staged.Stages;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.util.Pair;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;

/**
 * A wrap policy is user code: what it returns is checked, so that no two units share a name (and
 * with it their optimizer state, keyed by unit name).
 */
class UnitLayoutTest {

    private NDManager manager;
    private Block mlp;
    private LinkedHashMap<String, Parameter> trainable;

    @BeforeEach
    void setUp() {
        manager = NDManager.newBaseManager();
        // Stages 01Linear, 02LambdaBlock, 03Linear, 04LambdaBlock, 05Linear.
        mlp = Fixture.mlp();
        mlp.initialize(manager, DataType.FLOAT32, new Shape(2, 6));
        trainable = new LinkedHashMap<>();
        for (Pair<String, Parameter> p : mlp.getParameters()) {
            trainable.put(p.getKey(), p.getValue());
        }
    }

    @AfterEach
    void tearDown() {
        manager.close();
    }

    @Test
    void groupIdsBelowMinusOneAreRefused() {
        List<Stage> stages = Stages.of(mlp).orElseThrow();
        assertEquals(5, stages.size());
        // Before the check, -2 and -3 each made a unit named "root", sharing optimizer entries.
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> UnitLayout.of(stages, s -> new int[] {-2, -1, -3, -1, 0}, trainable));
        assertTrue(e.getMessage().contains("stage 01Linear"), e.getMessage());
        assertTrue(e.getMessage().contains("-2 (expected"), e.getMessage());
    }

    @Test
    void aNullAssignmentIsRefused() {
        List<Stage> stages = Stages.of(mlp).orElseThrow();
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> UnitLayout.of(stages, s -> null, trainable));
        assertTrue(e.getMessage().startsWith("wrap policy: null"), e.getMessage());
    }

    /** Two stages of one name in two groups would make two units of one name. */
    @Test
    void unitsOfTheSameNameAreRefused() {
        List<Block> linears = new ArrayList<>();
        for (Pair<String, Block> child : mlp.getChildren()) {
            if (!child.getValue().getParameters().isEmpty()) {
                linears.add(child.getValue());
            }
        }
        List<Stage> twins =
                List.of(
                        Stage.of("layer", linears.get(0)),
                        Stage.of("layer", linears.get(1)),
                        Stage.of("last", linears.get(2)));
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> UnitLayout.of(twins, s -> new int[] {0, 1, 2}, trainable));
        assertTrue(e.getMessage().contains("two units named layer"), e.getMessage());

        // A stage named "root" in a group of its own, beside the root unit.
        List<Stage> rootNamed =
                List.of(
                        Stage.of("root", linears.get(0)),
                        Stage.of("middle", linears.get(1)),
                        Stage.of("last", linears.get(2)));
        e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> UnitLayout.of(rootNamed, s -> new int[] {0, -1, 2}, trainable));
        assertTrue(e.getMessage().contains("two units named root"), e.getMessage());
    }

    /** Distinct names for distinct groups, the root's included, and the layout as expected. */
    @Test
    void validGroupsGiveDistinctUnits() {
        List<Stage> stages = Stages.of(mlp).orElseThrow();
        UnitLayout l = UnitLayout.of(stages, s -> new int[] {0, 0, -1, -1, 4}, trainable);
        List<String> names = new ArrayList<>();
        l.units().forEach(u -> names.add(u.name()));
        assertEquals(List.of("01Linear+02LambdaBlock", "root", "05Linear"), names);
    }
}
