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

import ai.djl.distributed.backend.nccl.CudaCompatibility.CudaVersion;

import com.sun.jna.Native;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.function.Function;

/**
 * What the {@code nccl} backend needs from the machine, probed at once: the CUDA driver ({@value
 * CudaDriver#LIBRARY}: initialised, at least one GPU), an NCCL ({@link NcclLocator}) of a CUDA the
 * driver and the process can run. When anything is missing, {@link #probe} fails with one message
 * covering both libraries: what was looked for, where, and what was found. Immutable.
 *
 * @param driver the bound driver API
 * @param driverCuda the CUDA version the driver supports
 * @param gpus the number of GPUs visible
 * @param nccl the NCCL found
 */
public record NcclRuntime(
        CudaDriver driver, CudaVersion driverCuda, int gpus, NcclLocator.Found nccl) {

    /**
     * Probes this process: the system loader for the driver, {@link NcclLocator#ofProcess()}.
     *
     * @return the runtime
     * @throws NcclUnavailableException naming what is missing
     */
    public static NcclRuntime probe() {
        return probe(
                name -> Native.load(name, CudaDriver.class),
                NcclLocator.ofProcess(),
                ProcessMaps.ofThisProcess());
    }

    /**
     * Probes with the given means (tests give their own).
     *
     * @param openDriver opens the driver by name; throws {@link UnsatisfiedLinkError} if absent
     * @param locator finds NCCL
     * @param maps the process's mapped files (for its CUDA runtime)
     * @return the runtime
     * @throws NcclUnavailableException naming what is missing
     */
    public static NcclRuntime probe(
            Function<String, CudaDriver> openDriver, NcclLocator locator, ProcessMaps maps) {
        StringBuilder problems = new StringBuilder();
        CudaDriver driver = null;
        CudaVersion driverCuda = null;
        int gpus = 0;
        String where =
                "the system loader (LD_LIBRARY_PATH="
                        + Optional.ofNullable(System.getenv("LD_LIBRARY_PATH")).orElse("<unset>")
                        + ", ld.so.cache, default folders)";
        try {
            driver = openDriver.apply(CudaDriver.LIBRARY);
        } catch (UnsatisfiedLinkError e) {
            problems.append("CUDA driver: looked for ")
                    .append(CudaDriver.LIBRARY)
                    .append(" through ")
                    .append(where)
                    .append(" -> not found (")
                    .append(NcclLocator.firstLine(e.getMessage()))
                    .append("); no NVIDIA driver is installed, or it is not visible here\n");
        }
        if (driver != null) {
            int init = driver.cuInit(0);
            IntByReference value = new IntByReference();
            int version = init == 0 ? driver.cuDriverGetVersion(value) : init;
            if (init != CudaResult.SUCCESS.code()) {
                problems.append("CUDA driver: ")
                        .append(CudaDriver.LIBRARY)
                        .append(" loaded, but cuInit -> ")
                        .append(describe(driver, init))
                        .append('\n');
            } else if (version != CudaResult.SUCCESS.code()) {
                problems.append("CUDA driver: cuDriverGetVersion -> ")
                        .append(describe(driver, version))
                        .append('\n');
            } else {
                driverCuda = driverCuda(value.getValue(), problems);
            }
        }
        if (driverCuda != null) {
            IntByReference value = new IntByReference();
            driver.cuDeviceGetCount(value);
            gpus = value.getValue();
            if (gpus < 1) {
                problems.append("CUDA driver: ")
                        .append(CudaDriver.LIBRARY)
                        .append(" (CUDA ")
                        .append(driverCuda)
                        .append(") sees no GPU\n");
            }
        }
        NcclLocator.Found nccl = null;
        try {
            nccl = locator.locate();
        } catch (NcclUnavailableException e) {
            problems.append("NCCL: ").append(e.getMessage()).append('\n');
        }
        if (nccl != null && driverCuda != null) {
            Optional<CudaVersion> built = buildCuda(nccl.path());
            if (built.isPresent()) {
                CudaCompatibility.mismatch(
                                nccl.path(),
                                built.get(),
                                driverCuda,
                                CudaCompatibility.runtimeMajor(maps))
                        .ifPresent(p -> problems.append("CUDA: ").append(p).append('\n'));
            }
        }
        if (problems.length() > 0) {
            throw new NcclUnavailableException(
                    "the "
                            + NcclOps.BACKEND
                            + " backend cannot run here:\n"
                            + problems.toString().trim());
        }
        return new NcclRuntime(driver, driverCuda, gpus, nccl);
    }

    /** The driver's CUDA, or null with the problem noted where its code is no version's. */
    private static CudaVersion driverCuda(int code, StringBuilder problems) {
        try {
            return CudaVersion.fromDriverCode(code);
        } catch (IllegalArgumentException e) {
            problems.append("CUDA driver: cuDriverGetVersion reported ")
                    .append(e.getMessage())
                    .append('\n');
            return null;
        }
    }

    private static Optional<CudaVersion> buildCuda(String path) {
        Path p = Path.of(path);
        if (!Files.isRegularFile(p)) {
            return Optional.empty();
        }
        try {
            return CudaCompatibility.buildCudaOf(p);
        } catch (IOException e) {
            return Optional.empty(); // unreadable: NCCL itself will tell at init
        }
    }

    /**
     * The driver's name and text of a result, e.g. {@code CUDA_ERROR_NO_DEVICE (no CUDA-capable
     * device is detected)}.
     */
    static String describe(CudaDriver driver, int result) {
        PointerByReference name = new PointerByReference();
        PointerByReference text = new PointerByReference();
        String n =
                driver.cuGetErrorName(result, name) == 0 && name.getValue() != null
                        ? name.getValue().getString(0)
                        : CudaResult.nameOf(result);
        String t =
                driver.cuGetErrorString(result, text) == 0 && text.getValue() != null
                        ? " (" + text.getValue().getString(0) + ")"
                        : "";
        return n + t;
    }
}
