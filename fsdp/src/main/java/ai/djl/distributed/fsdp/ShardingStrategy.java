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

/**
 * What fully sharded data parallelism shards, as PyTorch's {@code ShardingStrategy}.
 *
 * <p>Bytes per rank at rest for fp32 Adam with {@code P} parameters over {@code N} ranks: 16P for
 * {@link #NO_SHARD} (as DDP), 16P/N for the sharded strategies, 16P/S for {@link #HYBRID_SHARD}
 * with shards of {@code S} ranks.
 */
public enum ShardingStrategy {

    /**
     * Parameters, gradients and optimizer state sharded (ZeRO-3); each unit's parameters are
     * gathered just before its forward and freed after it, gathered again for its backward (into
     * the same memory, freed in place as PyTorch's FSDP does; where that cannot be done, the
     * backward recomputes the unit's forward from its input, as with activation checkpointing).
     */
    FULL_SHARD,

    /**
     * Gradients and optimizer state sharded, parameters sharded at rest (ZeRO-2 as FSDP offers it):
     * a unit's parameters stay gathered from its forward to its backward.
     */
    SHARD_GRAD_OP,

    /** Nothing sharded: every rank holds everything and gradients are all-reduced, as DDP. */
    NO_SHARD,

    /**
     * {@link #FULL_SHARD} within one dimension of a {@code DeviceMesh} (dimension 1: the ranks of a
     * row, typically one host), replicated across the other (dimension 0): gradients are
     * reduce-scattered within the row and all-reduced across rows.
     */
    HYBRID_SHARD;

    /** Whether a unit's parameters are freed after its forward and gathered again for backward. */
    boolean reshardsAfterForward() {
        return this == FULL_SHARD || this == HYBRID_SHARD;
    }
}
