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
package ai.djl.distributed.backend.cpu;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;

/**
 * A group of one rank runs under every transport the CPU backend offers: it is on one host with
 * itself, so {@code shm} is as valid for it as {@code tcp} (a launcher that sets the transport for
 * every job must not fail the single-process ones).
 */
@Timeout(120)
class WorldOfOneTest {

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp", "auto"})
    void aGroupOfOneRunsItsCollectives(String transport) throws Exception {
        MultiRank.run(
                1,
                transport,
                Duration.ofSeconds(30),
                (g, m) -> {
                    NDArray a = m.create(new float[] {1, 2});
                    g.allReduce(a, ReduceOp.SUM);
                    assertArrayEquals(new float[] {1, 2}, a.toFloatArray());
                    g.broadcast(a, 0);
                    assertArrayEquals(new float[] {1, 2}, a.toFloatArray());
                    g.barrier();
                    return null;
                });
    }
}
