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

import java.util.List;

/**
 * A block whose forward pass is a sequence of {@link Stage}s: the form in which FSDP gathers one
 * unit's parameters at a time and runs the backward pass segment by segment (PyTorch's FSDP does
 * this with module hooks, which DJL does not have). {@link Stages#of(Block)} finds the stages of a
 * block that implements this, and derives them for a {@code SequentialBlock}.
 *
 * <p>Contract: for any input, running {@link #getStages()} in order, each stage's outputs passed as
 * the next one's inputs, gives what {@code forward} gives, with the same parameters fetched through
 * the same parameter store; every parameter that takes a gradient belongs to at least one stage.
 */
public interface StagedBlock extends Block {

    /**
     * Returns the stages, in the order they run.
     *
     * @return the stages; the same list on every call
     */
    List<Stage> getStages();
}
