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
package ai.djl.distributed.examples;

import ai.djl.distributed.pg.Distributed;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.pg.ProcessGroups;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.distributed.store.HashStore;
import ai.djl.translate.TranslateException;

import java.io.IOException;
import java.time.Duration;

/**
 * The process group an example trains in: under a launcher ({@code WORLD_SIZE} set, as {@code
 * bin/djlrun}, torchrun, a PyTorchJob or Slurm set it) the world group from {@code env://}, else a
 * world of one, so that the same program runs alone or as one rank of a job.
 */
final class ExampleGroup {

    /** An example's body, run with the group. */
    interface Body<T> {
        T run(ProcessGroup group) throws IOException, TranslateException;
    }

    private ExampleGroup() {}

    /** Runs {@code body} in the group and tears the group down afterwards, failed or not. */
    static <T> T run(Body<T> body) throws IOException, TranslateException {
        return run("cpu", ProcessGroups.DEFAULT_TIMEOUT, body);
    }

    /**
     * As {@link #run(Body)}, with the group's backend and the bound of its rendezvous and of every
     * operation.
     */
    static <T> T run(String backend, Duration timeout, Body<T> body)
            throws IOException, TranslateException {
        if (DistributedEnv.fromProcess().get("WORLD_SIZE").isPresent()) {
            ProcessGroup world = Distributed.initProcessGroup(backend, "env://", -1, -1, timeout);
            try {
                return body.run(world);
            } finally {
                Distributed.destroyProcessGroup();
            }
        }
        try (HashStore store = new HashStore();
                ProcessGroup alone = ProcessGroups.init(backend, store, 0, 1, timeout)) {
            return body.run(alone);
        }
    }
}
