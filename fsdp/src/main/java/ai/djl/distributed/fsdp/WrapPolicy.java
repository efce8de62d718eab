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
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;

import java.util.Arrays;
import java.util.List;

/**
 * Decides FSDP's units: which stages of a model have their parameters gathered and sharded
 * together, as PyTorch's {@code auto_wrap_policy}. Each unit is one all-gather and one
 * reduce-scatter per step; what no unit claims, and every parameter used by stages of different
 * units (a tied embedding and language-model head), belongs to the root unit, which stays gathered
 * for the whole step.
 */
@FunctionalInterface
public interface WrapPolicy {

    /**
     * Groups the stages: {@code result[k]} is the group of stage {@code k} (stages of one group
     * form one unit, named after them), or -1 when the stage belongs to the root unit. FSDP refuses
     * a null result, one of another length, and groups below -1.
     *
     * @param stages the model's stages, in order
     * @return one group per stage
     */
    int[] assign(List<Stage> stages);

    /**
     * One unit per stage whose block is one of the classes (PyTorch's {@code
     * transformer_auto_wrap_policy}): for the GPT, {@code byBlockClass(GptBlock.class)} makes one
     * unit per transformer block, the embedding and head staying in the root unit.
     *
     * @param classes the block classes
     * @return the policy
     */
    static WrapPolicy byBlockClass(Class<?>... classes) {
        List<Class<?>> list = List.of(classes);
        return stages -> {
            int[] groups = new int[stages.size()];
            for (int k = 0; k < groups.length; k++) {
                Block b = stages.get(k).getBlock();
                groups[k] = b != null && list.stream().anyMatch(c -> c.isInstance(b)) ? k : -1;
            }
            return groups;
        };
    }

    /**
     * Consecutive stages grouped until a group holds at least {@code minParameters} parameter
     * elements (PyTorch's {@code size_based_auto_wrap_policy}); a last group below the bound joins
     * the root unit.
     *
     * @param minParameters the smallest unit, in elements
     * @return the policy
     * @throws IllegalArgumentException if the bound is not positive
     */
    static WrapPolicy byParameterCount(long minParameters) {
        if (minParameters <= 0) {
            throw new IllegalArgumentException(
                    "minParameters: " + minParameters + " (expected: > 0)");
        }
        return stages -> {
            int[] groups = new int[stages.size()];
            Arrays.fill(groups, -1);
            long count = 0;
            int start = 0;
            for (int k = 0; k < groups.length; k++) {
                for (Parameter p : stages.get(k).getParameters()) {
                    count += p.getShape() == null ? 0 : p.getShape().size();
                }
                if (count >= minParameters) {
                    Arrays.fill(groups, start, k + 1, start);
                    start = k + 1;
                    count = 0;
                }
            }
            return groups;
        };
    }

    /**
     * Every stage in the root unit: the whole model gathered for each step (sharded at rest only).
     *
     * @return the policy
     */
    static WrapPolicy rootOnly() {
        return stages -> {
            int[] groups = new int[stages.size()];
            Arrays.fill(groups, -1);
            return groups;
        };
    }
}
