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
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.Device;
import ai.djl.distributed.rendezvous.DistributedEnv;

import org.junit.jupiter.api.Test;

import java.util.Map;

/**
 * The device a data-parallel builder picks from the training configuration's list: the one at
 * {@code LOCAL_RANK}, and a clear refusal where there is none (never two ranks on one device).
 */
class DataParallelBuilderTest {

    private static final Device[] TWO = {Device.gpu(0), Device.gpu(1)};

    @Test
    void theDeviceAtLocalRank() {
        assertEquals(Device.gpu(1), DataParallelBuilder.localDevice(TWO, env("1")));
        assertEquals(Device.gpu(0), DataParallelBuilder.localDevice(TWO, env("0")));
        // Unset: rank 0's device, as torchrun's LOCAL_RANK defaults.
        assertEquals(
                Device.gpu(0), DataParallelBuilder.localDevice(TWO, DistributedEnv.of(Map.of())));
        // One device is every worker's, whatever its local rank (each given its own by
        // CUDA_VISIBLE_DEVICES, or all on the CPU).
        assertEquals(
                Device.cpu(),
                DataParallelBuilder.localDevice(new Device[] {Device.cpu()}, env("3")));
    }

    @Test
    void aLocalRankPastTheListIsRefusedRatherThanWrapped() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> DataParallelBuilder.localDevice(TWO, env("2")));
        assertEquals(
                "LOCAL_RANK=2 (expected: 0 <= LOCAL_RANK < 2, the training configuration's"
                        + " devices; one worker per device, or optDevice)",
                e.getMessage());
    }

    @Test
    void aNegativeLocalRankIsRefused() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> DataParallelBuilder.localDevice(TWO, env("-1")));
        assertEquals(
                "LOCAL_RANK=-1 (expected: 0 <= LOCAL_RANK < 2, the training configuration's"
                        + " devices; one worker per device, or optDevice)",
                e.getMessage());
    }

    @Test
    void anEmptyDeviceListIsRefused() {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> DataParallelBuilder.localDevice(new Device[0], env("0")));
        assertEquals(
                "trainingConfig devices: none (expected: at least one, or optDevice)",
                e.getMessage());
    }

    private static DistributedEnv env(String localRank) {
        return DistributedEnv.of(Map.of("LOCAL_RANK", localRank));
    }
}
