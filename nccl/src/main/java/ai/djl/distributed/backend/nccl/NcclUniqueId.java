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

import com.sun.jna.Structure;

import java.util.Arrays;

/**
 * {@code ncclUniqueId}: the 128 opaque bytes that name a communicator, made by one rank ({@code
 * ncclGetUniqueId}) and given to every rank's {@code ncclCommInitRankConfig} by value. Not
 * thread-safe (a JNA structure).
 */
@Structure.FieldOrder({"internal"})
public class NcclUniqueId extends Structure {

    /** {@code NCCL_UNIQUE_ID_BYTES}. */
    public static final int BYTES = 128;

    /** The id's bytes. */
    public byte[] internal = new byte[BYTES];

    /** Creates an id of zeros, to be filled by {@code ncclGetUniqueId}. */
    public NcclUniqueId() {}

    /** Fills an id from bytes already checked by {@link #of}. */
    NcclUniqueId(byte[] checked, boolean unused) {
        System.arraycopy(checked, 0, internal, 0, BYTES);
        write();
    }

    /**
     * Creates an id from bytes received through the store.
     *
     * @param bytes exactly {@value #BYTES} bytes
     * @return the id
     * @throws IllegalArgumentException if not
     */
    public static NcclUniqueId of(byte[] bytes) {
        return new NcclUniqueId(checked(bytes), true);
    }

    static byte[] checked(byte[] bytes) {
        if (bytes == null || bytes.length != BYTES) {
            throw new IllegalArgumentException(
                    "unique id: "
                            + (bytes == null ? "null" : bytes.length + " bytes")
                            + " (expected: "
                            + BYTES
                            + " bytes)");
        }
        return bytes;
    }

    /**
     * Returns a copy of the id's bytes (read from native memory first).
     *
     * @return {@value #BYTES} bytes
     */
    public byte[] toBytes() {
        read();
        return Arrays.copyOf(internal, BYTES);
    }

    /**
     * Returns this id as the by-value form {@code ncclCommInitRankConfig} takes.
     *
     * @return a copy, by value
     */
    public ByValue byValue() {
        return new ByValue(toBytes(), true);
    }

    /** The by-value form of an id. */
    public static final class ByValue extends NcclUniqueId implements Structure.ByValue {

        private ByValue(byte[] checked, boolean unused) {
            super(checked, unused);
        }
    }
}
