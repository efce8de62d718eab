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
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

/**
 * Backend strings as c10d reads them, and the choice of a backend by the arrays' device: written
 * from c10d's rules ({@code "cpu:gloo,cuda:nccl"}), not from the code.
 */
class BackendSpecTest {

    private static String fails(String spec) {
        return assertThrows(IllegalArgumentException.class, () -> BackendSpec.parse(spec))
                .getMessage();
    }

    @Test
    void aNameAloneServesWhatItsBackendServes() {
        BackendSpec spec = BackendSpec.parse("CPU");
        assertEquals("cpu", spec.single());
        assertEquals(Map.of(), spec.byDevice());
        assertEquals("cpu", spec.toString());
    }

    @Test
    void pairsGiveEachDeviceTypeItsBackendAndCudaIsGpu() {
        BackendSpec spec = BackendSpec.parse("cpu:gloo, cuda:nccl");
        assertNull(spec.single());
        assertEquals(List.of("cpu", "gpu"), List.copyOf(spec.byDevice().keySet()));
        assertEquals("gloo", spec.byDevice().get("cpu"));
        assertEquals("nccl", spec.byDevice().get("gpu"));
    }

    @Test
    void malformedStringsAreRefusedSayingWhatWasExpected() {
        assertTrue(fails("").contains("expected: a name such as cpu, or cpu:cpu,gpu:nccl"));
        assertTrue(fails(null).startsWith("backend: 'null'"));
        assertTrue(
                fails("cpu:cpu,gpu").contains("has 'gpu' (expected: DEVICE:NAME pairs"),
                fails("cpu:cpu,gpu"));
        assertTrue(
                fails("tpu:xla").contains("names device type 'tpu' (expected: cpu, gpu or cuda)"),
                fails("tpu:xla"));
        assertTrue(
                fails("cuda:nccl,gpu:nccl").contains("names device type gpu twice"),
                fails("cuda:nccl,gpu:nccl"));
    }

    @Test
    void theArraysDeviceTypePicksTheBackend() {
        List<String> both = List.of("cpu", "gpu");
        assertEquals("gpu", DeviceBackends.deviceTypeOf(List.of(Device.gpu(1)), both));
        assertEquals("cpu", DeviceBackends.deviceTypeOf(List.of(Device.cpu(), Device.cpu()), both));
        assertEquals("cpu", DeviceBackends.deviceTypeOf(List.of(), both), "no arrays: the CPU");
        assertEquals("gpu", DeviceBackends.deviceTypeOf(List.of(), List.of("gpu")));
    }

    @Test
    void aCallThatMixesDeviceTypesIsRefusedNamingBoth() {
        String m =
                assertThrows(
                                IllegalArgumentException.class,
                                () ->
                                        DeviceBackends.deviceTypeOf(
                                                List.of(Device.cpu(), Device.gpu(0)),
                                                List.of("cpu", "gpu")))
                        .getMessage();
        assertEquals(
                "arrays: on cpu() and gpu(0) (expected: every array of one collective on one device"
                        + " type)",
                m);
    }

    @Test
    void aDeviceTypeWithoutABackendIsRefusedNamingWhatTheGroupHas() {
        String m =
                assertThrows(
                                IllegalArgumentException.class,
                                () ->
                                        DeviceBackends.deviceTypeOf(
                                                List.of(Device.gpu(0)), List.of("cpu")))
                        .getMessage();
        assertTrue(m.startsWith("array: on gpu(0) (expected: a device type this group has a"), m);
        assertTrue(m.contains("[cpu]") && m.contains("\"cpu:cpu,gpu:nccl\""), m);
    }
}
