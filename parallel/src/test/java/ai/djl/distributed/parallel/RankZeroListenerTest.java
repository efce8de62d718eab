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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.training.Trainer;
import ai.djl.training.dataset.Batch;
import ai.djl.training.listener.EpochTrainingListener;
import ai.djl.training.listener.LoggingTrainingListener;
import ai.djl.training.listener.TrainingListener;
import ai.djl.training.listener.TrainingListener.BatchData;
import ai.djl.training.listener.TrainingListenerAdapter;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/** Which listeners each rank of a job runs, and what the rank-0 wrappers forward. */
@Timeout(60)
class RankZeroListenerTest {

    /** Counts the events it receives, and the last progress total it saw. */
    private static final class Counting extends TrainingListenerAdapter {

        final List<String> events = new ArrayList<>();
        long progressTotal = -1;

        @Override
        public void onEpoch(Trainer trainer) {
            events.add("epoch");
        }

        @Override
        public void onTrainingBatch(Trainer trainer, BatchData batchData) {
            events.add("batch");
            progressTotal = batchData.getBatch().getProgressTotal();
        }

        @Override
        public void onValidationBatch(Trainer trainer, BatchData batchData) {
            events.add("validation");
        }

        @Override
        public void onTrainingBegin(Trainer trainer) {
            events.add("begin");
        }

        @Override
        public void onTrainingEnd(Trainer trainer) {
            events.add("end");
        }
    }

    /**
     * On three ranks of one group: a wrapped listener and DJL's logging listener run on rank 0
     * only; a plain listener on every rank.
     */
    @Test
    void rankZeroListenersRunOnRankZeroOnlyAndOthersEverywhere() throws Exception {
        List<List<Integer>> counts =
                MultiRank.run(
                        3,
                        Duration.ofSeconds(30),
                        (group, manager) -> {
                            Counting mine = new Counting();
                            Counting everywhere = new Counting();
                            TrainingListener wrapped = new RankZeroListener(mine);
                            List<TrainingListener> configured =
                                    List.of(
                                            wrapped,
                                            everywhere,
                                            new LoggingTrainingListener(),
                                            new EpochTrainingListener());
                            List<TrainingListener> run =
                                    RankZeroListener.select(
                                            configured, group.getRank(), group.getSize());
                            for (TrainingListener l : run) {
                                // DJL's own listeners need a trainer: only ours are driven
                                if (l == wrapped || l == everywhere) {
                                    l.onTrainingBegin(null);
                                    l.onEpoch(null);
                                    l.onTrainingEnd(null);
                                }
                            }
                            long logging =
                                    run.stream()
                                            .filter(l -> l instanceof LoggingTrainingListener)
                                            .count();
                            assertEquals(0, logging, "DJL's logging listener is never run bare");
                            if (group.getRank() == 0) {
                                assertSame(wrapped, run.get(0));
                                assertTrue(run.get(2) instanceof RankZeroListener);
                                assertTrue(
                                        ((RankZeroListener) run.get(2)).getDelegate()
                                                instanceof LoggingTrainingListener);
                            }
                            return List.of(
                                    run.size(), mine.events.size(), everywhere.events.size());
                        });
        assertEquals(List.of(4, 3, 3), counts.get(0));
        assertEquals(List.of(2, 0, 3), counts.get(1));
        assertEquals(List.of(2, 0, 3), counts.get(2));
    }

    /** Alone (one rank, or no data-parallel trainer) everything runs, unchanged. */
    @Test
    void aSingleRankRunsEveryListenerUnwrapped() {
        LoggingTrainingListener logging = new LoggingTrainingListener();
        List<TrainingListener> run = RankZeroListener.select(List.of(logging), 0, 1);
        assertEquals(List.of(logging), run);
    }

    @Test
    void everyEventIsForwardedAndProgressCountsTheRanksShare() {
        try (NDManager manager = NDManager.newBaseManager(Device.cpu())) {
            forwarded(batchOf(manager, 10));
        }
    }

    private static void forwarded(BatchData data) {
        Counting inner = new Counting();
        RankZeroListener plain = new RankZeroListener(inner);
        plain.onTrainingBegin(null);
        plain.onTrainingBatch(null, data);
        assertEquals(10, inner.progressTotal, "a user's listener sees the batch as it is");
        plain.onValidationBatch(null, data);
        plain.onEpoch(null);
        plain.onTrainingEnd(null);
        assertEquals(List.of("begin", "batch", "validation", "epoch", "end"), inner.events);

        Counting shared = new Counting();
        new RankZeroListener(shared, 3).onTrainingBatch(null, data);
        assertEquals(4, shared.progressTotal, "ceil(10 / 3)");
        // wrapping a wrapper keeps one level
        assertSame(inner, new RankZeroListener(plain).getDelegate());
        assertThrows(IllegalArgumentException.class, () -> new RankZeroListener(null));
    }

    @Test
    void djlsListenersThatPrintOrWriteAreKnown() {
        assertTrue(RankZeroListener.printsOrWrites(new LoggingTrainingListener()));
        assertFalse(RankZeroListener.printsOrWrites(new EpochTrainingListener()));
    }

    private static BatchData batchOf(NDManager manager, long progressTotal) {
        Batch batch =
                new Batch(
                        manager, new NDList(), new NDList(), 1, null, null, 0, progressTotal, null);
        return new BatchData(batch, Map.of(), Map.of());
    }
}
