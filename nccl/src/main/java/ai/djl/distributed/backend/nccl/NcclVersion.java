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

/**
 * An NCCL version, read from {@code ncclGetVersion}'s code: {@code major * 10000 + minor * 100 +
 * patch} since 2.9, {@code major * 1000 + minor * 100 + patch} before ({@code NCCL_VERSION} in
 * {@code nccl.h}). Immutable.
 *
 * @param major the major version
 * @param minor the minor version
 * @param patch the patch level
 */
public record NcclVersion(int major, int minor, int patch) implements Comparable<NcclVersion> {

    /** The oldest NCCL the backend takes: 2.18, the first with {@code ncclCommSplit}. */
    public static final NcclVersion FLOOR = new NcclVersion(2, 18, 0);

    /**
     * Returns the code {@code NCCL_VERSION(major, minor, patch)} makes.
     *
     * @param major the major version
     * @param minor the minor version
     * @param patch the patch level
     * @return the code
     */
    public static int code(int major, int minor, int patch) {
        return major <= 2 && minor <= 8
                ? major * 1000 + minor * 100 + patch
                : major * 10000 + minor * 100 + patch;
    }

    /**
     * Reads a version code.
     *
     * @param code what {@code ncclGetVersion} returned
     * @return the version
     * @throws IllegalArgumentException for a code no NCCL returns (not positive)
     */
    public static NcclVersion fromCode(int code) {
        if (code <= 0) {
            throw new IllegalArgumentException(
                    "NCCL version code: " + code + " (expected: > 0, e.g. 21803 for 2.18.3)");
        }
        if (code < 10000) {
            // The old scheme (up to 2.8): one digit of major, one of minor, two of patch.
            return new NcclVersion(code / 1000, code % 1000 / 100, code % 100);
        }
        return new NcclVersion(code / 10000, code % 10000 / 100, code % 100);
    }

    /**
     * Returns whether this version is at least another.
     *
     * @param other the other version
     * @return whether this is the same or newer
     */
    public boolean atLeast(NcclVersion other) {
        return compareTo(other) >= 0;
    }

    /** {@inheritDoc} */
    @Override
    public int compareTo(NcclVersion o) {
        int c = Integer.compare(major, o.major);
        c = c != 0 ? c : Integer.compare(minor, o.minor);
        return c != 0 ? c : Integer.compare(patch, o.patch);
    }

    /** Returns the version as NCCL prints it, e.g. {@code 2.18.3}. */
    @Override
    public String toString() {
        return major + "." + minor + "." + patch;
    }
}
