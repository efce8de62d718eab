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

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.distributed.DistributedException;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

/**
 * A backward pass whose wait for a reduce-scatter gives up while the collective still runs (as an
 * NCCL collective can outlive its wait) must not hand that collective's buffers out again: they
 * stay out of the pool, which would give them to the next gather or reduction while the collective
 * still writes them. The collectives are held back by {@link LaggingBackendProvider}'s backend, a
 * CPU backend that starts them only when told to.
 */
@Timeout(120)
class ReductionWaitFailureTest {

    @Test
    void buffersOfAReductionStillRunningStayOutOfThePool() throws Exception {
        List<Boolean> ok =
                MultiRank.run(
                        2,
                        b -> b.setBackend(LaggingBackendProvider.NAME),
                        Duration.ofSeconds(30),
                        (group, manager) -> {
                            LaggingBackendProvider.Lagging backend =
                                    LaggingBackendProvider.backend(group.getRank());
                            try (Model model = Fixture.gptModel(0);
                                    FullyShardedDataParallel t =
                                            Fixture.fsdp(
                                                    model,
                                                    group,
                                                    FullyShardedDataParallel.builder())) {
                                t.units(); // sharded before the reductions are held
                                backend.hold();
                                NDList[] batch = Fixture.tokens(manager, 0, group.getRank(), 2);
                                // The backward pass folds a unit's reduction in once the next
                                // unit's has started: that wait gives up.
                                DistributedException e =
                                        assertThrows(
                                                DistributedException.class,
                                                () -> Fixture.backward(t, batch));
                                assertTrue(
                                        e.getMessage().contains("keeps running"), e.getMessage());
                                List<NDArray> held = backend.heldArrays();
                                assertTrue(
                                        held.size() >= 4, "reduce-scatters held: " + held.size());
                                for (NDArray a : held) {
                                    assertFalse(
                                            t.pool().holds(a),
                                            "a buffer of a running reduce-scatter in the pool");
                                }
                                // Both ranks: the held collectives run, in order, and the pass is
                                // dropped; then the trainer trains on.
                                backend.startHeld();
                                t.zeroGradients();
                                for (int s = 1; s <= 2; s++) {
                                    Fixture.backward(
                                            t, Fixture.tokens(manager, s, group.getRank(), 2));
                                    t.step();
                                }
                                return true;
                            }
                        });
        assertTrue(ok.stream().allMatch(b -> b));
    }
}
