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

import ai.djl.distributed.staged.Stage;
import ai.djl.nn.Parameter;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * FSDP's units, computed once from a model's stages and a wrap policy: each unit's parameters (in
 * definition order), the stages that use it, and for each stage the units it needs. The same on
 * every rank for the same model and policy; {@link #signature()} lets ranks check that.
 */
final class UnitLayout {

    /**
     * One unit.
     *
     * @param name the unit's name: {@code root}, or the stages it was made of
     * @param parameters its parameters, in definition order
     * @param names their names in the model
     * @param firstStage the first stage that uses it
     * @param lastStage the last stage that uses it
     */
    record Unit(
            String name,
            List<Parameter> parameters,
            List<String> names,
            int firstStage,
            int lastStage) {}

    private final List<Unit> units;
    private final int[][] unitsOfStage;
    private final int[][] unitsEndingAt;
    private final String signature;

    private UnitLayout(List<Unit> units, int[][] unitsOfStage, String signature) {
        this.units = units;
        this.unitsOfStage = unitsOfStage;
        this.signature = signature;
        unitsEndingAt = new int[unitsOfStage.length][];
        for (int k = 0; k < unitsOfStage.length; k++) {
            int stage = k;
            unitsEndingAt[k] =
                    Arrays.stream(unitsOfStage[k])
                            .filter(u -> units.get(u).lastStage() == stage)
                            .toArray();
        }
    }

    /**
     * Groups the trainable parameters into units.
     *
     * @param stages the model's stages
     * @param policy the wrap policy
     * @param trainable the parameters that take gradients, by name, in definition order
     * @return the layout
     * @throws IllegalArgumentException if a trainable parameter belongs to no stage, the policy
     *     gives no groups, groups of the wrong length or a group below -1, or two units would have
     *     one name (two stages of one name, or a stage named {@code root} in a group of its own)
     */
    static UnitLayout of(
            List<Stage> stages, WrapPolicy policy, LinkedHashMap<String, Parameter> trainable) {
        int[] groups = policy.assign(stages);
        if (groups == null || groups.length != stages.size()) {
            throw new IllegalArgumentException(
                    "wrap policy: "
                            + (groups == null ? "null" : groups.length + " groups")
                            + " (expected: one group per stage, "
                            + stages.size()
                            + ")");
        }
        for (int k = 0; k < groups.length; k++) {
            // Every negative group would be named root: two of them, two units sharing the root's
            // optimizer state.
            if (groups[k] < -1) {
                throw new IllegalArgumentException(
                        "wrap policy: stage "
                                + stages.get(k).getName()
                                + " in group "
                                + groups[k]
                                + " (expected: -1 for the root unit, or a group >= 0)");
            }
        }
        Map<Parameter, TreeSet<Integer>> usedBy = new IdentityHashMap<>();
        for (int k = 0; k < stages.size(); k++) {
            for (Parameter p : stages.get(k).getParameters()) {
                usedBy.computeIfAbsent(p, x -> new TreeSet<>()).add(k);
            }
        }
        // Group of each parameter: its stages' group if they agree, else the root (-1).
        Map<Integer, List<String>> byGroup = new LinkedHashMap<>();
        for (Map.Entry<String, Parameter> e : trainable.entrySet()) {
            TreeSet<Integer> uses = usedBy.get(e.getValue());
            if (uses == null) {
                throw new IllegalArgumentException(
                        "parameter "
                                + e.getKey()
                                + ": used by no stage (expected: every trainable parameter listed"
                                + " by the stage that fetches it)");
            }
            int g = groups[uses.first()];
            for (int k : uses) {
                if (groups[k] != g) {
                    g = -1;
                }
            }
            byGroup.computeIfAbsent(g, x -> new ArrayList<>()).add(e.getKey());
        }
        List<Unit> units = new ArrayList<>();
        for (Map.Entry<Integer, List<String>> e : byGroup.entrySet()) {
            List<Parameter> params = new ArrayList<>();
            int first = Integer.MAX_VALUE;
            int last = -1;
            TreeSet<String> stageNames = new TreeSet<>();
            for (String n : e.getValue()) {
                Parameter p = trainable.get(n);
                params.add(p);
                first = Math.min(first, usedBy.get(p).first());
                last = Math.max(last, usedBy.get(p).last());
            }
            for (int k = 0; k < stages.size(); k++) {
                if (e.getKey() >= 0 && groups[k] == e.getKey()) {
                    stageNames.add(stages.get(k).getName());
                }
            }
            String name = e.getKey() < 0 ? "root" : String.join("+", stageNames);
            units.add(
                    new Unit(
                            name,
                            Collections.unmodifiableList(params),
                            List.copyOf(e.getValue()),
                            first,
                            last));
        }
        // A unit's name keys its optimizer state and its part of a sharded checkpoint.
        Set<String> names = new HashSet<>();
        for (Unit u : units) {
            if (!names.add(u.name())) {
                throw new IllegalArgumentException(
                        "wrap policy: two units named "
                                + u.name()
                                + " (expected: unique unit names: stages of distinct names, and"
                                + " root only for the root unit)");
            }
        }
        // Gathering order: by first use; the root first among units first used by one stage.
        units.sort(
                (a, b) ->
                        a.firstStage() != b.firstStage()
                                ? Integer.compare(a.firstStage(), b.firstStage())
                                : Boolean.compare(
                                        !a.name().equals("root"), !b.name().equals("root")));
        int[][] ofStage = new int[stages.size()][];
        Map<Parameter, Integer> unitOf = new IdentityHashMap<>();
        for (int u = 0; u < units.size(); u++) {
            for (Parameter p : units.get(u).parameters()) {
                unitOf.put(p, u);
            }
        }
        for (int k = 0; k < stages.size(); k++) {
            TreeSet<Integer> need = new TreeSet<>();
            for (Parameter p : stages.get(k).getParameters()) {
                Integer u = unitOf.get(p);
                if (u != null) {
                    need.add(u);
                }
            }
            ofStage[k] = need.stream().mapToInt(Integer::intValue).toArray();
        }
        StringBuilder sig = new StringBuilder();
        for (Unit u : units) {
            sig.append("unit ").append(u.name()).append(':');
            for (int i = 0; i < u.names().size(); i++) {
                sig.append(' ').append(u.names().get(i)).append(u.parameters().get(i).getShape());
            }
            sig.append('\n');
        }
        return new UnitLayout(Collections.unmodifiableList(units), ofStage, sig.toString());
    }

    List<Unit> units() {
        return units;
    }

    /** The units stage {@code k} fetches parameters of, in unit order. */
    int[] unitsOfStage(int k) {
        return unitsOfStage[k];
    }

    /** The units whose last stage is {@code k}, in unit order: those a pass is done with there. */
    int[] unitsEndingAt(int k) {
        return unitsEndingAt[k];
    }

    int stageCount() {
        return unitsOfStage.length;
    }

    /** One line per unit: its name and its parameters' names and shapes. */
    String signature() {
        return signature;
    }

    /** The unit of every parameter, by parameter id. */
    Map<String, Integer> unitByParameterId() {
        Map<String, Integer> map = new HashMap<>();
        for (int u = 0; u < units.size(); u++) {
            for (Parameter p : units.get(u).parameters()) {
                map.put(p.getId(), u);
            }
        }
        return map;
    }
}
