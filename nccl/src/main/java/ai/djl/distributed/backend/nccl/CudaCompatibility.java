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

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Whether an NCCL can run with this CUDA driver and this process's CUDA runtime: NCCL links its
 * CUDA runtime statically, so an NCCL built for CUDA 13 needs a driver for CUDA 13, and a CUDA-12
 * NCCL in a process whose runtime (PyTorch's {@code libcudart.so.13}) is CUDA 13 is a known
 * failure. NCCL's build CUDA is read from its version banner ({@code "NCCL version
 * 2.21.5+cuda12.4"}, a literal in the library); the driver's from {@code cuDriverGetVersion}.
 * Stateless.
 */
public final class CudaCompatibility {

    /**
     * A CUDA version.
     *
     * @param major the major version
     * @param minor the minor version
     */
    public record CudaVersion(int major, int minor) {

        /**
         * Reads {@code cuDriverGetVersion}'s code: {@code 1000 * major + 10 * minor}.
         *
         * @param code e.g. 12040
         * @return e.g. 12.4
         */
        public static CudaVersion fromDriverCode(int code) {
            if (code <= 0) {
                throw new IllegalArgumentException(
                        "CUDA driver version: " + code + " (expected: > 0, e.g. 12040 for 12.4)");
            }
            return new CudaVersion(code / 1000, code % 1000 / 10);
        }

        /** Returns the version as CUDA prints it, e.g. {@code 12.4}. */
        @Override
        public String toString() {
            return major + "." + minor;
        }
    }

    private static final Pattern BANNER =
            Pattern.compile("NCCL version (\\d+\\.\\d+\\.\\d+)[^+\\x00]*\\+cuda(\\d+)\\.(\\d+)");
    private static final byte[] MARK = "NCCL version ".getBytes(StandardCharsets.US_ASCII);
    private static final int WINDOW = 64; // bytes kept after a mark: the banner is shorter

    /**
     * A CUDA runtime's file name. auditwheel's hash is the first 8 hex digits (lower case) of the
     * file's SHA-256: exactly that, so that another library whose name only starts alike ({@code
     * libcudart-shim.so.1}) is not taken for the runtime. The major has at most 9 digits, so it
     * always fits an int; every later part is digits, so a name with other text is refused rather
     * than read up to its first dot (a sign, {@code +12} or {@code -1}, is no digit either).
     */
    private static final Pattern RUNTIME =
            Pattern.compile("libcudart(?:-[0-9a-f]{8})?\\.so\\.([0-9]{1,9})(?:\\.[0-9]+)*");

    private CudaCompatibility() {}

    /**
     * Names the mismatch between NCCL's CUDA and the driver's or the process's, if any.
     *
     * @param ncclPath the NCCL's file, for the message
     * @param ncclCuda the CUDA NCCL was built for
     * @param driver the CUDA the driver supports
     * @param runtimeMajor the major of the CUDA runtime already in the process ({@code
     *     libcudart.so.N}, see {@link #runtimeMajor}), if any
     * @return the problem, or empty when they match
     */
    public static Optional<String> mismatch(
            String ncclPath, CudaVersion ncclCuda, CudaVersion driver, OptionalInt runtimeMajor) {
        if (ncclCuda.major() > driver.major()) {
            return Optional.of(
                    "NCCL at "
                            + ncclPath
                            + " was built for CUDA "
                            + ncclCuda
                            + " but the driver supports CUDA "
                            + driver
                            + " at most: use an NCCL for CUDA "
                            + driver.major()
                            + " (pip nvidia-nccl-cu"
                            + driver.major()
                            + ") or a newer driver");
        }
        if (runtimeMajor.isPresent() && runtimeMajor.getAsInt() != ncclCuda.major()) {
            return Optional.of(
                    "NCCL at "
                            + ncclPath
                            + " was built for CUDA "
                            + ncclCuda
                            + " but this process runs CUDA "
                            + runtimeMajor.getAsInt()
                            + " (libcudart.so."
                            + runtimeMajor.getAsInt()
                            + ", e.g. PyTorch's): use the NCCL of CUDA "
                            + runtimeMajor.getAsInt()
                            + " (the wheel next to that PyTorch)");
        }
        return Optional.empty();
    }

    /**
     * Returns the major of the CUDA runtime mapped in a process: the first mapped file named as a
     * versioned runtime (see {@link #runtimeMajorOfName}).
     *
     * @param maps the process's mapped files
     * @return N, if a versioned libcudart is mapped
     */
    public static OptionalInt runtimeMajor(ProcessMaps maps) {
        for (Path p : maps.named("libcudart")) {
            OptionalInt major = runtimeMajorOfName(String.valueOf(p.getFileName()));
            if (major.isPresent()) {
                return major;
            }
        }
        return OptionalInt.empty();
    }

    /**
     * Reads the major of a CUDA runtime from its file name: {@code libcudart.so.N}, with or without
     * the {@code .minor.patch} that follows as the toolkit installs it ({@code
     * libcudart.so.12.4.127}), or {@code libcudart-HHHHHHHH.so.N...}, the name auditwheel gives a
     * library it bundles into a wheel ({@code torch/lib/libcudart-d0da41ae.so.11.0} in PyTorch's
     * wheels that carried their CUDA). A mapped file since deleted ({@code " (deleted)"} in the
     * maps) still counts. Anything else is no runtime's name: {@code libcudart.so} (the link-time
     * name, no version), {@code libcudart_static}, {@code libcudart-shim.so.1} (not a hash), a
     * version with other text in it ({@code libcudart.so.12.bak}). Stateless.
     *
     * @param fileName a file name, without its directory
     * @return N, if the name is a versioned runtime's
     */
    static OptionalInt runtimeMajorOfName(String fileName) {
        // The kernel marks a mapped file no longer on disk (a wheel upgraded under the process).
        Matcher m = RUNTIME.matcher(ProcessMaps.withoutDeletedMark(fileName));
        return m.matches() ? OptionalInt.of(Integer.parseInt(m.group(1))) : OptionalInt.empty();
    }

    /**
     * Reads the CUDA an NCCL was built for from its version banner.
     *
     * @param banner text such as {@code "NCCL version 2.21.5+cuda12.4"}
     * @return the CUDA version, if the text has one
     */
    public static Optional<CudaVersion> parseBanner(String banner) {
        Matcher m = BANNER.matcher(banner);
        return m.find()
                ? Optional.of(
                        new CudaVersion(Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3))))
                : Optional.empty();
    }

    /**
     * Reads the CUDA an NCCL was built for from the banner inside its file (one pass over the file,
     * a fraction of a second for a pip wheel's library).
     *
     * @param library the NCCL's file
     * @return the CUDA version, if the file has a banner
     * @throws IOException if the file cannot be read
     */
    public static Optional<CudaVersion> buildCudaOf(Path library) throws IOException {
        try (InputStream in = Files.newInputStream(library)) {
            byte[] buf = new byte[1 << 20];
            int kept = 0;
            int n;
            while ((n = in.read(buf, kept, buf.length - kept)) > 0) {
                int end = kept + n;
                for (int i = indexOf(buf, 0, end); i >= 0; i = indexOf(buf, i + 1, end)) {
                    if (i + WINDOW > end && n > 0 && end == buf.length) {
                        break; // the banner may run past the buffer: keep it for the next read
                    }
                    String text =
                            new String(
                                    buf, i, Math.min(WINDOW, end - i), StandardCharsets.ISO_8859_1);
                    Optional<CudaVersion> v = parseBanner(text);
                    if (v.isPresent()) {
                        return v;
                    }
                }
                // Keep the tail: a mark (and its banner) may straddle two reads.
                kept = Math.min(WINDOW, end);
                System.arraycopy(buf, end - kept, buf, 0, kept);
            }
        }
        return Optional.empty();
    }

    private static int indexOf(byte[] buf, int from, int end) {
        outer:
        for (int i = from; i <= end - MARK.length; i++) {
            for (int j = 0; j < MARK.length; j++) {
                if (buf[i + j] != MARK[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
