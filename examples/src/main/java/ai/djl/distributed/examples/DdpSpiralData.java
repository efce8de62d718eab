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
package ai.djl.distributed.examples;

import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.Shape;
import ai.djl.training.dataset.ArrayDataset;
import ai.djl.training.dataset.Sampler;

import java.util.Random;

/**
 * The data of {@code ddp_basics}, generated: three interleaved spiral arms in the plane, one class
 * each, with noise in angle and position (the arms overlap near the centre). Every rank generates
 * the same points from the seed; a sampler gives each its share. A linear model cannot separate the
 * arms; a small MLP can.
 */
final class DdpSpiralData {

    static final int CLASSES = 3;
    static final int FEATURES = 2;

    private DdpSpiralData() {}

    /**
     * Generates {@code n} points.
     *
     * @param manager where the arrays live
     * @param n the number of points
     * @param seed the noise's seed
     * @param sampler how batches are drawn
     * @return the dataset: features (n, 2), labels (n)
     */
    static ArrayDataset generate(NDManager manager, int n, long seed, Sampler sampler) {
        Random random = new Random(seed);
        float[] x = new float[n * FEATURES];
        float[] y = new float[n];
        for (int i = 0; i < n; i++) {
            int c = i % CLASSES;
            double t = random.nextDouble();
            double angle = c * 2 * Math.PI / CLASSES + 6.0 * t + 0.2 * random.nextGaussian();
            double radius = 0.1 + t;
            x[FEATURES * i] = (float) (radius * Math.cos(angle) + 0.07 * random.nextGaussian());
            x[FEATURES * i + 1] = (float) (radius * Math.sin(angle) + 0.07 * random.nextGaussian());
            y[i] = c;
        }
        return new ArrayDataset.Builder()
                .setData(manager.create(x, new Shape(n, FEATURES)))
                .optLabels(manager.create(y, new Shape(n)))
                .setSampling(sampler)
                .build();
    }
}
