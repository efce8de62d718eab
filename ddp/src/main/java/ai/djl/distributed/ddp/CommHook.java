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

import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDArray;

import java.util.concurrent.CompletableFuture;

/**
 * How one bucket of gradients is reduced across ranks, as PyTorch's DDP communication hooks ({@code
 * register_comm_hook}): the default all-reduces and averages; others compress what goes on the
 * wire. Built-ins are in {@link CommHooks}.
 *
 * <p>Called on the training thread once per bucket per synchronized step, in bucket order, as soon
 * as the bucket is filled; it should start its collectives and return without waiting for them.
 * Every rank must issue the same collectives in the same order, so a hook must not depend on
 * rank-local conditions. Dependent stages of the future may run on the backend's threads: keep them
 * short.
 */
@FunctionalInterface
public interface CommHook {

    /**
     * Starts reducing a bucket.
     *
     * @param group the process group of the data-parallel ranks
     * @param bucket the bucket; its buffer holds this rank's gradients
     * @return a future completed with the gradients averaged over the ranks, one dimension, as many
     *     elements and the same data type as the bucket's buffer (the buffer itself, reduced in
     *     place, or an array attached to {@link GradBucket#getManager()})
     */
    CompletableFuture<NDArray> reduce(ProcessGroup group, GradBucket bucket);
}
