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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Model;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDList;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.index.NDIndex;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;
import ai.djl.pytorch.engine.PtNDArray;
import ai.djl.training.GradientCollector;

import com.sun.jna.Pointer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.List;

/**
 * FULL_SHARD frees each transformer block's gathered parameters after its forward pass, in place
 * ({@link StorageResize}), and gathers them into the same memory for its backward pass; with
 * activation checkpointing it releases them and recomputes instead. That the gradients stay exact
 * is {@code FsdpEquivalenceTest}'s part; here, that the memory is really freed, and the resizer's
 * own contract.
 */
@Timeout(120)
class ReshardInPlaceTest {

    @Test
    void freedMemoryComesBackUnderTheSameViews() {
        try (NDManager m = NDManager.newBaseManager()) {
            StorageResize r = StorageResize.get(m).orElseThrow(AssertionError::new);
            NDArray flat = m.zeros(new Shape(1000), DataType.FLOAT32);
            NDArray view = flat.get("10:20");
            r.free(flat);
            assertTrue(r.isFreed(flat));
            r.restore(flat);
            assertFalse(r.isFreed(flat));
            flat.set(new NDIndex(":"), m.arange(1000f)); // in place, over whatever the memory held
            float[] expected = new float[10];
            for (int i = 0; i < 10; i++) {
                expected[i] = 10 + i;
            }
            assertArrayEquals(expected, view.toFloatArray());
        }
    }

    @Test
    void storagesNotAsExpectedAreRefusedUntouched() {
        try (NDManager m = NDManager.newBaseManager()) {
            StorageResize r = StorageResize.get(m).orElseThrow(AssertionError::new);
            NDArray flat = m.zeros(new Shape(100), DataType.FLOAT32);
            NDArray offset = flat.get("10:20");
            IllegalStateException e =
                    assertThrows(IllegalStateException.class, () -> r.free(offset));
            assertTrue(e.getMessage().contains("400 bytes"), e.getMessage());
            assertThrows(IllegalStateException.class, () -> r.restore(flat)); // not freed
            r.free(flat);
            assertThrows(IllegalStateException.class, () -> r.free(flat)); // freed already
            assertTrue(r.isFreed(flat));
            r.restore(flat);
            assertEquals(100, flat.toFloatArray().length);
        }
    }

    @Test
    void aStorageWhoseDataPointerThrowsIsRefusedNotResized() {
        // libtorch 2.7.1's resize_bytes_cpu reads the old data pointer, which throws (across JNA:
        // the process ends) on a storage marked throw_on_immutable_data_ptr_ (byte 61).
        try (NDManager m = NDManager.newBaseManager()) {
            StorageResize r = StorageResize.get(m).orElseThrow(AssertionError::new);
            NDArray flat = m.zeros(new Shape(100), DataType.FLOAT32);
            Pointer storage =
                    new Pointer(((PtNDArray) flat).getHandle()).getPointer(0).getPointer(16);
            storage.setByte(61, (byte) 1);
            try {
                assertThrows(IllegalStateException.class, () -> r.free(flat));
            } finally {
                storage.setByte(61, (byte) 0);
            }
            r.free(flat);
            storage.setByte(61, (byte) 1);
            try {
                assertThrows(IllegalStateException.class, () -> r.restore(flat));
            } finally {
                storage.setByte(61, (byte) 0);
            }
            r.restore(flat);
            assertEquals(100, flat.toFloatArray().length);
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void blocksAreFreedAfterTheirForwardAndGatheredForTheirBackward(boolean recompute)
            throws Exception {
        int layers = Fixture.gpt(0).getLayers();
        List<int[]> seen =
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
                                                                    ShardingStrategy.FULL_SHARD)
                                                            .optActivationCheckpointing(
                                                                    recompute))) {
                                NDList[] batch = Fixture.tokens(manager, 0, group.getRank(), 2);
                                int[] counts = new int[4];
                                try (GradientCollector c = t.newGradientCollector()) {
                                    NDList p = t.forward(batch[0], batch[1]);
                                    for (FlatUnit u : t.units()) {
                                        counts[0] += u.isEvicted() ? 1 : 0;
                                        counts[1] += u.isGathered() ? 1 : 0;
                                    }
                                    c.backward(t.getLoss().evaluate(batch[1], p));
                                }
                                for (FlatUnit u : t.units()) {
                                    counts[2] += u.isGathered() || u.isEvicted() ? 1 : 0;
                                }
                                counts[3] = t.pool().emptiedCount();
                                return counts;
                            }
                        });
        for (int[] counts : seen) {
            // evicted after the forward pass: every block (recompute: none, they are released);
            // gathered: the evicted blocks and the root (embedding, final norm, tied head), which
            // the last stage uses; after the backward pass, nothing
            assertEquals(recompute ? 0 : layers, counts[0], "units freed in place");
            assertEquals(recompute ? 1 : layers + 1, counts[1], "units gathered");
            assertEquals(0, counts[2], "units held after the backward pass");
            // and the blocks' buffers wait in the pool without their memory, which the next
            // pass would free after each block's forward anyway (all but those the gradients'
            // packing took again, of the same size); none under recompute, which frees nothing
            if (recompute) {
                assertEquals(0, counts[3], "buffers pooled without memory");
            } else {
                assertTrue(
                        counts[3] >= 1 && counts[3] <= layers,
                        "buffers pooled without memory: " + counts[3]);
            }
        }
    }
}
