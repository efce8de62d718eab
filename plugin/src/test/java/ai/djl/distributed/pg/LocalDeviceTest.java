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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.Device;
import ai.djl.distributed.rendezvous.DistributedEnv;

import org.junit.jupiter.api.Test;

import java.util.Map;

/** {@link Distributed#localDevice}: GPU {@code LOCAL_RANK} where there are GPUs, as torchrun's. */
class LocalDeviceTest {

    @Test
    void eachLocalRankTakesItsGpu() {
        assertEquals(Device.gpu(1), Distributed.localDevice(env("1"), 2));
        assertEquals(Device.gpu(0), Distributed.localDevice(DistributedEnv.of(Map.of()), 1));
    }

    @Test
    void aWorkerThatSeesOneGpuTakesItWhateverItsLocalRank() {
        // CUDA_VISIBLE_DEVICES gave each worker its own: the one it sees is GPU 0.
        assertEquals(Device.gpu(0), Distributed.localDevice(env("3"), 1));
    }

    @Test
    void withoutGpusEveryWorkerUsesTheCpu() {
        assertEquals(Device.cpu(), Distributed.localDevice(env("3"), 0));
    }

    @Test
    void aLocalRankBeyondTheGpusIsNamed() {
        IllegalStateException e =
                assertThrows(
                        IllegalStateException.class, () -> Distributed.localDevice(env("2"), 2));
        assertEquals(
                "LOCAL_RANK=2 (expected: 0 <= LOCAL_RANK < 2, the GPUs this process sees; start"
                        + " one worker per GPU, e.g. djlrun --nproc-per-node gpu)",
                e.getMessage());
    }

    private static DistributedEnv env(String localRank) {
        return DistributedEnv.of(Map.of("LOCAL_RANK", localRank));
    }
}
