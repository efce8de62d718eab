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

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.distributed.testing.MultiRank;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.function.IntFunction;

/**
 * Options that decide which collectives a step issues (the buckets' limits, the unused-parameter
 * map, the staged backward pass, which never rebuilds its buckets) must be the same on every rank:
 * a rank that differs is refused when the parameters are synchronized, naming the option, rather
 * than issuing collectives its peers do not expect.
 */
@Timeout(60)
class OptionsAcrossRanksTest {

    private static final int BATCH = 4;

    private static void assertRefused(IntFunction<DistributedDataParallel.Builder> builder)
            throws Exception {
        Exception e =
                assertThrows(
                        Exception.class,
                        () ->
                                MultiRank.run(
                                        2,
                                        Duration.ofSeconds(5),
                                        (group, manager) -> {
                                            try (Model model = Model.newInstance("ddp")) {
                                                model.setBlock(Fixture.mlp());
                                                try (DistributedDataParallel t =
                                                        Fixture.ddp(
                                                                model,
                                                                group,
                                                                Fixture::sgd,
                                                                builder.apply(group.getRank()),
                                                                BATCH)) {
                                                    for (int s = 0; s < 3; s++) {
                                                        Fixture.step(
                                                                t,
                                                                manager,
                                                                s,
                                                                group.getRank(),
                                                                BATCH);
                                                    }
                                                }
                                            }
                                            return null;
                                        }));
        Throwable c = e;
        while (c != null && !(c instanceof IllegalStateException)) {
            c = c.getCause();
        }
        assertTrue(c != null, "expected an IllegalStateException, got " + e);
        assertTrue(c.getMessage().contains("DDP options"), c.getMessage());
    }

    @Test
    void bucketLimitsThatDifferAcrossRanksAreRefused() throws Exception {
        assertRefused(
                rank ->
                        DistributedDataParallel.builder()
                                .optFirstBucketBytes(256)
                                .optBucketCapBytes(rank == 0 ? 4096 : 512));
    }

    @Test
    void findUnusedParametersThatDiffersAcrossRanksIsRefused() throws Exception {
        assertRefused(rank -> DistributedDataParallel.builder().optFindUnusedParameters(rank == 0));
    }
}
