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

import ai.djl.ndarray.NDList;
import ai.djl.nn.Block;
import ai.djl.nn.Parameter;
import ai.djl.training.ParameterStore;
import ai.djl.util.Pair;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;

/**
 * One step of a model's forward pass: a function from the previous stage's outputs to this stage's,
 * and the parameters it reads. Running a {@link StagedBlock}'s stages one after the other, each
 * stage's outputs the next one's inputs, gives the block's forward pass.
 *
 * <p>A stage must fetch every parameter it uses through the {@link ParameterStore} it is given and
 * list each of them in {@link #getParameters()}: a trainer that runs a model stage by stage gathers
 * a stage's parameters before it runs and frees them after. A parameter may belong to several
 * stages (a tied embedding and language-model head). Immutable and thread-safe; the arrays a stage
 * returns belong to the manager of its first input, as any DJL operation's.
 */
public final class Stage {

    /** What a stage computes. */
    @FunctionalInterface
    public interface Function {

        /**
         * Runs the stage.
         *
         * @param ps the parameter store to fetch parameters from
         * @param inputs the previous stage's outputs (the model's inputs, for the first stage)
         * @param training whether this is a training pass (dropout on)
         * @return the stage's outputs
         */
        NDList apply(ParameterStore ps, NDList inputs, boolean training);
    }

    private final String name;
    private final Block block;
    private final List<Parameter> parameters;
    private final Function function;

    private Stage(String name, Block block, List<Parameter> parameters, Function function) {
        if (name == null || name.isEmpty()) {
            throw new IllegalArgumentException("stage name: " + name + " (expected: a name)");
        }
        this.name = name;
        this.block = block;
        this.parameters = Collections.unmodifiableList(new ArrayList<>(parameters));
        this.function = Objects.requireNonNull(function, "function");
    }

    /**
     * A stage that is one block: its parameters are the block's, it runs the block's forward pass.
     *
     * @param name the stage's name (the block's name in its parent, say)
     * @param block the block
     * @return the stage
     */
    public static Stage of(String name, Block block) {
        List<Parameter> params = new ArrayList<>();
        for (Pair<String, Parameter> p : block.getParameters()) {
            params.add(p.getValue());
        }
        return new Stage(
                name, block, params, (ps, in, training) -> block.forward(ps, in, training));
    }

    /**
     * A stage that computes a function of the given parameters (some of a model's own parameters,
     * or parts of several blocks).
     *
     * @param name the stage's name
     * @param parameters every parameter the function fetches, in definition order
     * @param function what the stage computes
     * @return the stage
     */
    public static Stage of(String name, List<Parameter> parameters, Function function) {
        return new Stage(name, null, parameters, function);
    }

    /**
     * A stage that is one block whose forward pass is called in a way of the model's own (with
     * extra arguments, say); its parameters are the block's.
     *
     * @param name the stage's name
     * @param block the block, which wrap policies by block class match
     * @param function what the stage computes
     * @return the stage
     */
    public static Stage of(String name, Block block, Function function) {
        List<Parameter> params = new ArrayList<>();
        for (Pair<String, Parameter> p : block.getParameters()) {
            params.add(p.getValue());
        }
        return new Stage(name, block, params, function);
    }

    /**
     * Returns this stage under another name (a nested stage's path in its parent, say).
     *
     * @param newName the name
     * @return a stage with the same block, parameters and function
     */
    public Stage withName(String newName) {
        return new Stage(newName, block, parameters, function);
    }

    /**
     * Returns the stage's name.
     *
     * @return the name, unique among its model's stages
     */
    public String getName() {
        return name;
    }

    /**
     * Returns the block this stage runs, if it is one block.
     *
     * @return the block, or null for a stage made of a function
     */
    public Block getBlock() {
        return block;
    }

    /**
     * Returns the parameters the stage reads.
     *
     * @return an unmodifiable list, in definition order
     */
    public List<Parameter> getParameters() {
        return parameters;
    }

    /**
     * Runs the stage.
     *
     * @param ps the parameter store to fetch parameters from
     * @param inputs the previous stage's outputs
     * @param training whether this is a training pass
     * @return the stage's outputs
     */
    public NDList forward(ParameterStore ps, NDList inputs, boolean training) {
        return function.apply(ps, inputs, training);
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "stage " + name;
    }
}
