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
package ai.djl.distributed.transformer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Test;

class KvCacheTest {

    /**
     * A pass that failed after its first layer appended leaves that layer one step ahead; rolling
     * back trims it to the cached length, so a retry sees each position once.
     */
    @Test
    void rollingBackTrimsLayersThatAppendedPastTheLength() {
        GptConfig config = TestModels.small(); // 2 layers
        try (NDManager m = NDManager.newBaseManager();
                KvCache cache = new KvCache(m, config)) {
            NDArray k1 = m.arange(8f).reshape(new Shape(1, 2, 2, 2)); // 2 positions
            NDArray v1 = k1.mul(10);
            cache.append(0, k1, v1);
            cache.append(1, k1.duplicate(), v1.duplicate());
            cache.advance(2);
            // The next step: layer 0 appends one position, then layer 1 fails.
            NDArray k2 = m.full(new Shape(1, 2, 1, 2), 99f);
            cache.append(0, k2, k2.duplicate());
            cache.rollBack();
            assertEquals(2, cache.length());
            // The retry: each layer gets positions 0 and 1, then the new one, once.
            for (int layer = 0; layer < 2; layer++) {
                NDArray[] kv =
                        cache.append(
                                layer,
                                m.full(new Shape(1, 2, 1, 2), 7f),
                                m.full(new Shape(1, 2, 1, 2), 7f));
                assertEquals(new Shape(1, 2, 3, 2), kv[0].getShape(), "layer " + layer);
                float[] keys = kv[0].toFloatArray();
                // head 0: positions 0, 1 from k1 (0..3), then 7, 7; head 1: 4..7, then 7, 7
                assertArrayEquals(
                        new float[] {0, 1, 2, 3, 7, 7, 4, 5, 6, 7, 7, 7}, keys, "layer " + layer);
                assertEquals(new Shape(1, 2, 3, 2), kv[1].getShape(), "layer " + layer);
            }
            cache.advance(1);
            assertEquals(3, cache.length());
        }
    }

    /** Rolling back an empty cache's first step leaves nothing cached. */
    @Test
    void rollingBackAFirstStepEmptiesTheLayers() {
        GptConfig config = TestModels.small();
        try (NDManager m = NDManager.newBaseManager();
                KvCache cache = new KvCache(m, config)) {
            NDArray k = m.ones(new Shape(1, 2, 3, 2));
            cache.append(0, k, k.duplicate());
            cache.rollBack();
            NDArray[] kv =
                    cache.append(0, m.zeros(new Shape(1, 2, 1, 2)), m.zeros(new Shape(1, 2, 1, 2)));
            assertEquals(new Shape(1, 2, 1, 2), kv[0].getShape());
        }
    }
}
