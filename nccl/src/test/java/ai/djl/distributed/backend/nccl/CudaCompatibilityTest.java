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
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.backend.nccl.CudaCompatibility.CudaVersion;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.Random;

class CudaCompatibilityTest {

    @TempDir Path tmp;

    @Test
    void driverCodesAreRead() {
        assertEquals(new CudaVersion(12, 4), CudaVersion.fromDriverCode(12040));
        assertEquals(new CudaVersion(13, 0), CudaVersion.fromDriverCode(13000));
        assertEquals(new CudaVersion(11, 8), CudaVersion.fromDriverCode(11080));
        assertEquals("12.4", CudaVersion.fromDriverCode(12040).toString());
    }

    @Test
    void anNcclNewerThanTheDriverIsNamed() {
        Optional<String> p =
                CudaCompatibility.mismatch(
                        "/x/libnccl.so.2",
                        new CudaVersion(13, 0),
                        new CudaVersion(12, 4),
                        OptionalInt.empty());
        assertTrue(p.isPresent());
        assertTrue(p.get().contains("/x/libnccl.so.2"), p.get());
        assertTrue(p.get().contains("CUDA 13.0"), p.get());
        assertTrue(p.get().contains("CUDA 12.4"), p.get());
        assertTrue(p.get().contains("nvidia-nccl-cu12"), p.get());
    }

    @Test
    void anNcclOfAnotherCudaThanTheProcessIsNamed() {
        Optional<String> p =
                CudaCompatibility.mismatch(
                        "/x/libnccl.so.2",
                        new CudaVersion(12, 8),
                        new CudaVersion(13, 0),
                        OptionalInt.of(13));
        assertTrue(p.isPresent());
        assertTrue(p.get().contains("libcudart.so.13"), p.get());
        assertTrue(p.get().contains("CUDA 12.8"), p.get());
    }

    @Test
    void matchingVersionsPass() {
        CudaVersion nccl = new CudaVersion(12, 2);
        assertTrue(
                CudaCompatibility.mismatch("n", nccl, new CudaVersion(12, 4), OptionalInt.of(12))
                        .isEmpty());
        // An older NCCL on a newer driver, with no CUDA runtime in the process: the driver runs it.
        assertTrue(
                CudaCompatibility.mismatch("n", nccl, new CudaVersion(13, 0), OptionalInt.empty())
                        .isEmpty());
        // A newer minor within one major: minor-version compatibility.
        assertTrue(
                CudaCompatibility.mismatch(
                                "n",
                                new CudaVersion(12, 8),
                                new CudaVersion(12, 2),
                                OptionalInt.empty())
                        .isEmpty());
    }

    @Test
    void theRuntimeMajorComesFromTheMappedLibcudart() {
        ProcessMaps maps =
                ProcessMaps.parse(
                        List.of("1-2 r-xp 0 0:0 1 /site/nvidia/cu13/lib/libcudart.so.13"));
        assertEquals(OptionalInt.of(13), CudaCompatibility.runtimeMajor(maps));
        ProcessMaps full =
                ProcessMaps.parse(List.of("1-2 r-xp 0 0:0 1 /cuda/lib64/libcudart.so.12.4.127"));
        assertEquals(OptionalInt.of(12), CudaCompatibility.runtimeMajor(full));
        assertEquals(
                OptionalInt.empty(), CudaCompatibility.runtimeMajor(ProcessMaps.parse(List.of())));
    }

    @Test
    void aHashedRuntimeNameAsAuditwheelGraftsItIsRead() {
        // auditwheel renames a library it bundles base-<8 hex of its SHA-256>.ext: PyTorch's
        // older wheels carry torch/lib/libcudart-<hash>.so.11.0 so
        assertEquals(OptionalInt.of(11), majorOf("/site/torch/lib/libcudart-d0da41ae.so.11.0"));
        assertEquals(OptionalInt.of(12), majorOf("/site/torch/lib/libcudart-1a2b3c4d.so.12"));
        assertEquals(OptionalInt.of(10), majorOf("/site/torch/lib/libcudart-1b201d85.so.10.1"));
    }

    @Test
    void aRuntimeReplacedOnDiskWhileMappedStillCounts() {
        // the kernel appends " (deleted)" to a mapped file since removed, e.g. a wheel upgraded
        // under a running process: the old library is still the process's runtime
        assertEquals(
                OptionalInt.of(13), majorOf("/site/nvidia/cu13/lib/libcudart.so.13 (deleted)"));
        assertEquals(
                OptionalInt.of(11),
                majorOf("/site/torch/lib/libcudart-d0da41ae.so.11.0 (deleted)"));
    }

    @Test
    void namesThatAreNotAVersionedRuntimeAreNotRead() {
        for (String name :
                List.of(
                        "libcudart.so", // the link-time name: no version
                        "libcudart.so.", // nothing after the dot
                        "libcudart_static.a",
                        "libcudart_static.so.12",
                        "libcudart-1a2b3c4d.so", // hashed, no version
                        "libcudart-shim.so.12", // a wrapper, not a hash
                        "libcudart-1a2b3c4.so.12", // seven hex digits
                        "libcudart-1a2b3c4d5.so.12", // nine
                        "libcudart-1A2B3C4D.so.12", // auditwheel's hashes are lower case
                        "libcudart.so.x12",
                        "libcudart.so.12abc",
                        "libcudart.so.12.bak",
                        "libcudart.so.12.4.x",
                        "libcudart.so.+12", // Integer.parseInt's sign
                        "libcudart.so.-1",
                        "libcudart.so.99999999999", // past an int
                        "libcudart.so.12 (gone)",
                        "libcudartx.so.12",
                        "libcudart.so.12.gz")) {
            assertEquals(OptionalInt.empty(), majorOf("/x/" + name), name);
        }
        // a directory of that name holding something else
        assertEquals(OptionalInt.empty(), majorOf("/x/libcudart.so.12/libfoo.so"));
    }

    @Test
    void theFirstMappedRuntimeCountsAndOtherNamesAreSkipped() {
        ProcessMaps maps =
                ProcessMaps.parse(
                        List.of(
                                "1-2 r-xp 0 0:0 1 /cuda/lib64/libcudart.so",
                                "3-4 r-xp 0 0:0 2 /x/libcudart-shim.so.13",
                                "5-6 r-xp 0 0:0 3 /site/torch/lib/libcudart-d0da41ae.so.11.0",
                                "7-8 r-xp 0 0:0 4 /cuda/lib64/libcudart.so.12"));
        assertEquals(OptionalInt.of(11), CudaCompatibility.runtimeMajor(maps));
    }

    /** The runtime major read from a process whose maps hold one file. */
    private static OptionalInt majorOf(String path) {
        return CudaCompatibility.runtimeMajor(
                ProcessMaps.parse(List.of("7f00-7f01 r-xp 00000000 08:01 42 " + path)));
    }

    @Test
    void theBannerNamesTheBuildCuda() {
        assertEquals(
                Optional.of(new CudaVersion(12, 4)),
                CudaCompatibility.parseBanner("NCCL version 2.21.5+cuda12.4"));
        assertEquals(
                Optional.of(new CudaVersion(13, 0)),
                CudaCompatibility.parseBanner("xxNCCL version 2.28.9a+cuda13.0\0yy"));
        assertTrue(CudaCompatibility.parseBanner("NCCL version 2.21.5").isEmpty());
    }

    @Test
    void theBannerIsFoundInsideALibraryFileAcrossReadBoundaries() throws IOException {
        byte[] noise = new byte[(1 << 20) + 4096];
        new Random(3).nextBytes(noise);
        for (int i = 0; i < noise.length; i++) {
            noise[i] = (byte) (noise[i] == 'N' ? 'M' : noise[i]); // no accidental marks
        }
        byte[] banner = "NCCL version 2.26.2+cuda12.8\0".getBytes(StandardCharsets.US_ASCII);
        // A decoy mark without a CUDA version first, then the banner across the 1 MiB boundary.
        byte[] decoy = "NCCL version %s\0".getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(decoy, 0, noise, 100, decoy.length);
        System.arraycopy(banner, 0, noise, (1 << 20) - 10, banner.length);
        Path lib = Files.write(tmp.resolve("libnccl.so.2"), noise);
        assertEquals(Optional.of(new CudaVersion(12, 8)), CudaCompatibility.buildCudaOf(lib));

        byte[] none = new byte[5000];
        Path other = Files.write(tmp.resolve("other.so"), none);
        assertTrue(CudaCompatibility.buildCudaOf(other).isEmpty());
    }
}
