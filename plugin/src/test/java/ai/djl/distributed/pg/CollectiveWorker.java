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
package ai.djl.distributed.pg;

import ai.djl.Device;
import ai.djl.distributed.CommunicationException;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;

import java.time.Duration;

/**
 * A rank of the multi-process tests, configured by the launcher's environment (env://).
 *
 * <ul>
 *   <li>{@code check}: runs allReduce, broadcast and allGather with closed-form expectations and
 *       prints {@code OK rank r of n}; exits 1 on a wrong result.
 *   <li>{@code loop}: prints {@code ready} after its first allReduce, then all-reduces until the
 *       group fails; prints {@code FAILED: message} and exits 3.
 * </ul>
 */
public final class CollectiveWorker {

    private CollectiveWorker() {}

    /**
     * Runs the worker.
     *
     * @param args the mode
     */
    public static void main(String[] args) {
        ProcessGroup g =
                Distributed.initProcessGroup("cpu", "env://", -1, -1, Duration.ofSeconds(120));
        int r = g.getRank();
        int n = g.getSize();
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            if ("loop".equals(args[0])) {
                NDArray a = m.ones(new ai.djl.ndarray.types.Shape(100_000));
                // Large enough for the direct path where the ranks may read each other's memory.
                NDArray big = m.ones(new ai.djl.ndarray.types.Shape(400_000));
                try {
                    g.allReduce(a);
                    System.out.println("ready");
                    System.out.flush();
                    while (true) {
                        g.allReduce(a);
                        g.allReduce(big);
                    }
                } catch (CommunicationException e) {
                    System.out.println("FAILED: " + e.getMessage());
                    System.out.flush();
                    Runtime.getRuntime().halt(3);
                }
            }
            NDArray a = m.arange(0f, 1000f).add(r);
            g.allReduce(a);
            float[] got = a.toFloatArray();
            for (int i = 0; i < got.length; i++) {
                if (got[i] != n * i + n * (n - 1) / 2f) {
                    throw new AssertionError("allReduce element " + i + ": " + got[i]);
                }
            }
            NDArray large = m.arange(0f, 600_000f).add(r);
            g.allReduce(large);
            float[] gotLarge = large.toFloatArray();
            for (int i = 0; i < gotLarge.length; i++) {
                if (gotLarge[i] != n * (float) i + n * (n - 1) / 2f) {
                    throw new AssertionError("large allReduce element " + i + ": " + gotLarge[i]);
                }
            }
            NDArray b = m.create(new int[] {r * 7});
            g.broadcast(b, n - 1);
            if (b.getInt(0) != (n - 1) * 7) {
                throw new AssertionError("broadcast: " + b.getInt(0));
            }
            NDArray all = m.zeros(new ai.djl.ndarray.types.Shape(n));
            g.allGatherIntoTensor(all, m.create(new float[] {r + 0.5f}));
            for (int j = 0; j < n; j++) {
                if (all.getFloat(j) != j + 0.5f) {
                    throw new AssertionError("allGather " + j + ": " + all.getFloat(j));
                }
            }
            g.barrier();
            System.out.println("OK rank " + r + " of " + n);
        } finally {
            Distributed.destroyProcessGroup();
        }
    }
}
