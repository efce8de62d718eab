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
package ai.djl.distributed.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.Device;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.nccl.CudaCompatibility.CudaVersion;
import ai.djl.distributed.pg.ProcessGroups;
import ai.djl.distributed.store.HashStore;

import com.sun.jna.ptr.IntByReference;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

class NcclBackendProviderTest {

    @TempDir Path tmp;

    @Test
    void ncclIsRegisteredForGpuArrays() {
        assertTrue(ProcessGroups.availableBackends().contains("nccl"));
        NcclBackendProvider p = new NcclBackendProvider();
        assertEquals(List.of("nccl"), p.getNames());
        assertEquals(List.of(Device.Type.GPU), p.getDeviceTypes());
    }

    /** This machine has no driver and no NCCL: a user's group fails at once, saying why. */
    @Test
    void creatingAGroupWithoutAGpuFailsNamingWhatWasLookedFor() {
        for (String spec : List.of("cpu:cpu,gpu:nccl", "cpu:gloo,cuda:nccl", "nccl")) {
            NcclUnavailableException e =
                    assertThrows(
                            NcclUnavailableException.class,
                            () ->
                                    ProcessGroups.init(
                                            spec, new HashStore(), 0, 1, Duration.ofSeconds(30)));
            String m = e.getMessage();
            assertTrue(m.startsWith("the nccl backend cannot run here"), m);
            assertTrue(
                    m.contains("CUDA driver: looked for libcuda.so.1 through the system loader"),
                    m);
            assertTrue(m.contains("not found"), m);
            assertTrue(m.contains("NCCL: no usable NCCL (libnccl.so.2, at least 2.18.0)"), m);
            assertTrue(m.contains("system loader (LD_LIBRARY_PATH="), m);
        }
    }

    @Test
    void anExplicitFakeLibraryIsNamedInTheError() throws IOException {
        Path fake = Files.writeString(tmp.resolve("libnccl.so.2"), "text, not ELF");
        String before = System.getProperty(NcclCandidates.PROPERTY);
        System.setProperty(NcclCandidates.PROPERTY, fake.toString());
        try {
            NcclUnavailableException e =
                    assertThrows(
                            NcclUnavailableException.class,
                            () -> new NcclBackendProvider().create(gpuContext(Map.of())));
            String m = e.getMessage();
            assertTrue(m.contains("explicit path (system property djl.dist.nccl.library="), m);
            assertTrue(m.contains(fake + " -> not a loadable library"), m);
            assertTrue(!m.contains("  system loader"), m); // no other place for NCCL tried
        } finally {
            if (before == null) {
                System.clearProperty(NcclCandidates.PROPERTY);
            } else {
                System.setProperty(NcclCandidates.PROPERTY, before);
            }
        }
    }

    @Test
    void unknownOptionsAreRefused() {
        BackendContext context = gpuContext(Map.of("transport", "shm"));
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class,
                        () -> new NcclBackendProvider().create(context));
        assertTrue(e.getMessage().contains("nccl.transport"), e.getMessage());
    }

    @Test
    void badOptionValuesAreNamed() {
        for (Map<String, String> options :
                List.of(
                        Map.of("device", "-1"),
                        Map.of("device", "gpu0"),
                        Map.of("blockingWait", "yes"))) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> new NcclBackendProvider().create(gpuContext(options)),
                            options::toString);
            Map.Entry<String, String> o = options.entrySet().iterator().next();
            assertTrue(
                    e.getMessage()
                            .startsWith("backend option nccl." + o.getKey() + "=" + o.getValue()),
                    e.getMessage());
        }
    }

    /** A driver that initialises, supports a CUDA version and sees some GPUs. */
    // One rank of one on a GPU, with a short timeout.
    private static BackendContext gpuContext(Map<String, String> options) {
        return new BackendContext(
                new HashStore(), 0, 1, Device.Type.GPU, Duration.ofSeconds(5), options);
    }

    private static CudaDriver driver(int versionCode, int gpus) {
        return NativeFakes.of(
                CudaDriver.class,
                Map.of(
                        "cuInit",
                        a -> 0,
                        "cuDriverGetVersion",
                        a -> {
                            ((IntByReference) a[0]).setValue(versionCode);
                            return 0;
                        },
                        "cuDeviceGetCount",
                        a -> {
                            ((IntByReference) a[0]).setValue(gpus);
                            return 0;
                        }));
    }

    @Test
    void aDriverWithoutAGpuIsNamed() {
        String m = probeFailure(driver(12040, 0));
        assertTrue(m.contains("(CUDA 12.4) sees no GPU"), m);
    }

    /** Why the probe with this driver and no NCCL fails. */
    private static String probeFailure(CudaDriver driver) {
        NcclLocator none = new NcclLocator(List.of(), t -> null);
        return assertThrows(
                        NcclUnavailableException.class,
                        () -> NcclRuntime.probe(n -> driver, none, ProcessMaps.parse(List.of())))
                .getMessage();
    }

    @Test
    void aDriverReportingNoVersionIsNamedWithTheRest() {
        String m = probeFailure(driver(0, 1));
        assertTrue(
                m.contains("CUDA driver: cuDriverGetVersion reported CUDA driver version: 0"), m);
        assertTrue(m.contains("NCCL: no usable NCCL"), m);
    }

    @Test
    void aDriverWithoutADeviceIsNamed() {
        CudaDriver noDevice =
                NativeFakes.of(
                        CudaDriver.class,
                        Map.of(
                                "cuInit", a -> 100,
                                "cuGetErrorName", a -> 1,
                                "cuGetErrorString", a -> 1));
        NcclLocator none = new NcclLocator(List.of(), t -> null);
        NcclUnavailableException e =
                assertThrows(
                        NcclUnavailableException.class,
                        () -> NcclRuntime.probe(n -> noDevice, none, ProcessMaps.parse(List.of())));
        assertTrue(e.getMessage().contains("cuInit -> CUDA_ERROR_NO_DEVICE"), e.getMessage());
    }

    @Test
    void anNcclBuiltForANewerCudaThanTheDriverIsNamed() throws IOException {
        Path lib =
                Files.writeString(
                        tmp.resolve("libnccl.so.2"), "\0\0NCCL version 2.28.9+cuda13.0\0\0");
        CudaDriver cuda124 = driver(12040, 1);
        NcclLocator locator =
                new NcclLocator(
                        List.of(new NcclCandidates.Candidate("test", lib.toString(), false)),
                        t -> NativeFakes.nccl(22809));
        NcclUnavailableException e =
                assertThrows(
                        NcclUnavailableException.class,
                        () ->
                                NcclRuntime.probe(
                                        n -> cuda124, locator, ProcessMaps.parse(List.of())));
        assertTrue(e.getMessage().contains("built for CUDA 13.0"), e.getMessage());
        assertTrue(e.getMessage().contains("the driver supports CUDA 12.4"), e.getMessage());

        // The same NCCL with a CUDA 13 driver: the probe passes, and creation says what it found.
        CudaDriver cuda130 = driver(13000, 1);
        NcclRuntime runtime =
                NcclRuntime.probe(n -> cuda130, locator, ProcessMaps.parse(List.of()));
        assertEquals(new CudaVersion(13, 0), runtime.driverCuda());
        assertEquals(1, runtime.gpus());
        // Creation is lazy, as PyTorch's: no communicator (and no native call) until a
        // collective, or at once on the GPU named by the device option, which must exist.
        try (Backend lazy = new NcclBackendProvider(() -> runtime).create(gpuContext(Map.of()))) {
            assertTrue(lazy.toString().contains("no communicator yet"), lazy.toString());
        }
        IllegalArgumentException noSuchGpu =
                assertThrows(
                        IllegalArgumentException.class,
                        () ->
                                new NcclBackendProvider(() -> runtime)
                                        .create(gpuContext(Map.of("device", "3"))));
        assertEquals(
                "GPU 3 (expected: 0 <= id < 1, the GPUs the driver sees)", noSuchGpu.getMessage());
    }
}
