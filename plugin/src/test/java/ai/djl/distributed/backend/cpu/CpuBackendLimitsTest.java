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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

/** Sizes the CPU backend cannot take fail at the call, leaving the group usable. */
@Timeout(120)
class CpuBackendLimitsTest {

    /**
     * A coalesced all-reduce of arrays each under 2 GiB but over it in all: the backend packs them
     * into one buffer, which cannot be made. It failed when it ran ("capacity < 0"), aborting the
     * group; it is refused at the call instead. (Two uninitialized 1-GiB arrays on one rank: their
     * pages are never touched, so they take address space, not memory.)
     */
    @Test
    void coalescedArraysOver2GiBInAllAreRefusedAtTheCall() throws Exception {
        MultiRank.run(
                1,
                "tcp",
                Duration.ofSeconds(30),
                (g, m) -> {
                    try (NDArray a = m.create(new Shape(1L << 28), DataType.FLOAT32);
                            NDArray b = m.create(new Shape(1L << 28), DataType.FLOAT32)) {
                        IllegalArgumentException e =
                                assertThrows(
                                        IllegalArgumentException.class,
                                        () -> g.allReduceCoalesced(List.of(a, b), ReduceOp.SUM));
                        assertTrue(e.getMessage().contains("2147483648 bytes"), e.getMessage());
                    }
                    NDArray small = m.create(new float[] {1, 2});
                    g.allReduce(small, ReduceOp.SUM);
                    assertArrayEquals(new float[] {1, 2}, small.toFloatArray(), "the group works");
                    return null;
                });
    }
}
