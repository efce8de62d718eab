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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.NDManager;
import ai.djl.nn.Block;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.List;
import java.util.Map;

/**
 * DDP with the staged backward pass ({@code optStagedBackward}): its reductions start during the
 * backward pass, and the parameters after K steps are bit for bit those of DDP without it, with
 * small buckets (several per step) and with gradient accumulation under {@code noSync()}; a second
 * backward pass outside {@code noSync()} is refused.
 */
@Timeout(120)
class StagedBackwardDdpTest {

    private static final int STEPS = 4;
    private static final int BATCH = 4;

    private record Run(Map<String, float[]> params, boolean pendingAfterBackward) {}

    private static List<Run> train(boolean staged, int micro) throws Exception {
        return Ranks.run(
                2,
                (group, manager) -> {
                    try (Model model = Model.newInstance("ddp")) {
                        Block block = Fixture.mlp();
                        // The same parameters in both runs.
                        block.setInitializer(Fixture.deterministic(), p -> true);
                        model.setBlock(block);
                        try (DistributedDataParallel t =
                                Fixture.ddp(
                                        model,
                                        group,
                                        Fixture::adamW,
                                        DistributedDataParallel.builder()
                                                .optFirstBucketBytes(256)
                                                .optBucketCapBytes(1024)
                                                .optStagedBackward(staged),
                                        BATCH)) {
                            boolean pending = false;
                            for (int s = 0; s < STEPS; s++) {
                                try (NDManager m = manager.newSubManager()) {
                                    for (int k = 0; k < micro - 1; k++) {
                                        NoSync scope = t.noSync();
                                        try {
                                            Fixture.backward(
                                                    t,
                                                    Fixture.batch(
                                                            m,
                                                            s * micro + k,
                                                            group.getRank(),
                                                            BATCH));
                                        } finally {
                                            scope.close();
                                        }
                                    }
                                    Fixture.backward(
                                            t,
                                            Fixture.batch(
                                                    m,
                                                    s * micro + micro - 1,
                                                    group.getRank(),
                                                    BATCH));
                                    pending |= t.hasPendingUpdates();
                                    t.step();
                                }
                            }
                            return new Run(Fixture.snapshot(model.getBlock()), pending);
                        }
                    }
                });
    }

    @Test
    void reductionsStartInTheBackwardPassAndGiveTheSameParameters() throws Exception {
        for (int micro : new int[] {1, 2}) {
            List<Run> plain = train(false, micro);
            List<Run> staged = train(true, micro);
            assertTrue(staged.get(0).pendingAfterBackward(), "buckets launched in backward");
            assertTrue(!plain.get(0).pendingAfterBackward());
            for (int r = 0; r < 2; r++) {
                Fixture.assertSame(plain.get(r).params(), staged.get(r).params());
            }
        }
    }

    @Test
    void aSecondBackwardPassOutsideNoSyncIsRefused() throws Exception {
        List<String> messages =
                Ranks.run(
                        2,
                        (group, manager) -> {
                            try (Model model = Model.newInstance("ddp")) {
                                model.setBlock(Fixture.mlp());
                                try (DistributedDataParallel t =
                                        Fixture.ddp(
                                                model,
                                                group,
                                                Fixture::adamW,
                                                DistributedDataParallel.builder()
                                                        .optStagedBackward(true),
                                                BATCH)) {
                                    Fixture.backward(
                                            t, Fixture.batch(manager, 0, group.getRank(), BATCH));
                                    IllegalStateException e =
                                            assertThrows(
                                                    IllegalStateException.class,
                                                    () ->
                                                            Fixture.backward(
                                                                    t,
                                                                    Fixture.batch(
                                                                            manager,
                                                                            1,
                                                                            group.getRank(),
                                                                            BATCH)));
                                    t.step();
                                    return e.getMessage();
                                }
                            }
                        });
        assertTrue(messages.get(0).contains("inside noSync()"), messages.get(0));
        assertEquals(2, messages.size());
    }

    @Test
    void stagedBackwardDoesNotCombineWithOverlapWithForward() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                Ranks.run(
                                        1,
                                        (group, manager) -> {
                                            try (Model model = Model.newInstance("ddp")) {
                                                model.setBlock(Fixture.mlp());
                                                return Fixture.ddp(
                                                        model,
                                                        group,
                                                        Fixture::adamW,
                                                        DistributedDataParallel.builder()
                                                                .optStagedBackward(true)
                                                                .optOverlapWithForward(true),
                                                        BATCH);
                                            }
                                        }));
        assertTrue(e.getMessage().startsWith("stagedBackward with overlapWithForward true"));
    }
}
