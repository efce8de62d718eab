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

import ai.djl.nn.Block;
import ai.djl.nn.SequentialBlock;
import ai.djl.util.Pair;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** Finds the stages of a block. Stateless. */
public final class Stages {

    private Stages() {}

    /**
     * Returns a block's stages: those a {@link StagedBlock} declares, or for a {@link
     * SequentialBlock} one stage per child block, in order (a child that is itself staged or
     * sequential is expanded in place, so nested sequences give their leaves). A sequence that
     * returns its intermediate results ({@link SequentialBlock#isReturnIntermediate()}), or a
     * subclass that overrides its forward pass without declaring stages, is no chain of stages: it
     * has no staged form, and nested it is one stage.
     *
     * @param block the block
     * @return the stages, or empty when the block has no staged form
     */
    public static Optional<List<Stage>> of(Block block) {
        if (block instanceof StagedBlock) {
            return Optional.of(((StagedBlock) block).getStages());
        }
        if (isChain(block)) {
            List<Stage> stages = new ArrayList<>();
            expand("", (SequentialBlock) block, stages);
            return stages.isEmpty() ? Optional.empty() : Optional.of(stages);
        }
        return Optional.empty();
    }

    private static void expand(String prefix, SequentialBlock block, List<Stage> into) {
        for (Pair<String, Block> child : block.getChildren()) {
            String name = prefix + child.getKey();
            Block b = child.getValue();
            // a block's declared stages first, as of(Block) takes them: a SequentialBlock that
            // is also a StagedBlock says how its own forward pass runs
            if (b instanceof StagedBlock) {
                for (Stage s : ((StagedBlock) b).getStages()) {
                    into.add(s.withName(name + "." + s.getName()));
                }
            } else if (isChain(b)) {
                expand(name + ".", (SequentialBlock) b, into);
            } else {
                into.add(Stage.of(name, b));
            }
        }
    }

    /**
     * Returns whether a block's forward pass is its children's, chained: a {@link SequentialBlock}
     * that returns only the last child's outputs, and whose class (a subclass, say one that adds a
     * residual) overrides no forward method of it.
     */
    private static boolean isChain(Block block) {
        if (!(block instanceof SequentialBlock)
                || ((SequentialBlock) block).isReturnIntermediate()) {
            return false;
        }
        for (Class<?> c = block.getClass(); c != SequentialBlock.class; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals("forward") || m.getName().equals("forwardInternal")) {
                    return false;
                }
            }
        }
        return true;
    }
}
