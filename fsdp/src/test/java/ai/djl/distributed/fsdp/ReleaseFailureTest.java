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
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.training.GradientCollector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.reflect.Field;
import java.util.List;

/**
 * A unit whose release fails to free its memory (StorageResize refusing a storage not as it
 * expects) must still leave the trainer usable: the unit not gathered, the pass dropped, the other
 * units released, and nothing half-freed handed out by the pool again. The failure is injected by
 * freeing the regathered buffer behind the unit's back.
 */
@Timeout(120)
class ReleaseFailureTest {

    @Test
    void aReleaseWhoseFreeFailsLeavesTheTrainerUsable() throws Exception {
        List<Boolean> ok =
                Fixture.ranks(
                        2,
                        (group, manager) -> {
                            try (Model model = Fixture.gptModel(0);
                                    FullyShardedDataParallel t =
                                            Fixture.fsdp(
                                                    model,
                                                    group,
                                                    FullyShardedDataParallel.builder()
                                                            .optStrategy(
                                                                    ShardingStrategy.FULL_SHARD))) {
                                NDList[] batch = Fixture.tokens(manager, 0, group.getRank(), 2);
                                GradientCollector c = t.newGradientCollector();
                                t.forward(batch[0], batch[1]);
                                FlatUnit victim = null;
                                for (FlatUnit u : t.units()) {
                                    if (u.isEvicted()) {
                                        victim = u;
                                        break;
                                    }
                                }
                                assertTrue(victim != null, "nothing freed in place");
                                victim.gather(); // both ranks: a collective
                                victim.awaitGather();
                                Field f = FlatUnit.class.getDeclaredField("gatheredArray");
                                f.setAccessible(true);
                                NDArray gathered = (NDArray) f.get(victim);
                                StorageResize.get(manager).orElseThrow().free(gathered);
                                assertThrows(IllegalStateException.class, c::close);
                                for (FlatUnit u : t.units()) {
                                    assertFalse(u.isGathered(), "unit " + u.name() + " gathered");
                                }
                                // the next steps run as ever
                                for (int s = 1; s <= 2; s++) {
                                    NDList[] b = Fixture.tokens(manager, s, group.getRank(), 2);
                                    Fixture.backward(t, b);
                                    t.step();
                                }
                                return true;
                            }
                        });
        assertTrue(ok.stream().allMatch(b -> b));
    }
}
