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

import ai.djl.distributed.testing.MultiRank;

import java.time.Duration;
import java.util.List;

/**
 * The plugin's in-process multi-rank harness ({@link MultiRank}) as the DDP tests use it, with the
 * lock they share: DJL's PyTorch engine allows one {@code GradientCollector} at a time per JVM, so
 * ranks take {@link #BACKWARD} around forward and backward; their steps (the collectives) run
 * unlocked.
 */
final class Ranks {

    /** Held by a rank from before its forward pass to after its backward pass. */
    static final Object BACKWARD = new Object();

    /** The group timeout of the runs. */
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Ranks() {}

    static <T> List<T> run(int size, MultiRank.Body<T> body) throws Exception {
        return MultiRank.run(size, TIMEOUT, body);
    }
}
