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
package ai.djl.distributed.parallel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;

/** How DDP's start-up broadcast of the model behaves when one of its broadcasts fails. */
@Timeout(60)
class ModelSyncTest {

    /**
     * A broadcast refused at submission (a null array) fails the call only once the broadcasts
     * started before it have ended: their arrays hold rank 0's values when it throws, and the
     * caller may close them.
     */
    @Test
    void aFailedBroadcastThrowsOnlyOnceTheStartedOnesHaveEnded() throws Exception {
        int n = 8 << 20; // 32 MiB: still in flight when the null is refused
        List<Long> ones =
                MultiRank.run(
                        2,
                        Duration.ofSeconds(60),
                        (group, manager) -> {
                            NDArray big =
                                    manager.full(new Shape(n), group.getRank() == 0 ? 1f : -1f);
                            IllegalArgumentException e =
                                    assertThrows(
                                            IllegalArgumentException.class,
                                            () ->
                                                    ModelSync.broadcast(
                                                            group, Arrays.asList(big, null)));
                            assertTrue(e.getMessage().contains("null"), e.getMessage());
                            long count = 0;
                            for (float v : big.toFloatArray()) {
                                count += v == 1f ? 1 : 0;
                            }
                            return count;
                        });
        assertEquals(List.of((long) n, (long) n), ones);
    }
}
