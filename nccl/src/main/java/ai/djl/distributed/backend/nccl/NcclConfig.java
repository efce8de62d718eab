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

import com.sun.jna.Pointer;
import com.sun.jna.Structure;

/**
 * {@code ncclConfig_t} as NCCL 2.17 laid it out ({@code ncclConfig_v21700}: size, magic, version,
 * then blocking, cgaClusterSize, minCTAs, maxCTAs, netName, splitShare). The struct is versioned:
 * NCCL reads the size and version the caller wrote and takes only the fields those cover, leaving
 * its defaults for newer ones, so this small fixed layout stays valid on every later NCCL.
 *
 * <p>The constructor applies {@code NCCL_CONFIG_INITIALIZER}: every field undefined ({@link
 * #UNDEF_INT}, null), which NCCL reads as "its default". Not thread-safe (a JNA structure).
 */
@Structure.FieldOrder({
    "size",
    "magic",
    "version",
    "blocking",
    "cgaClusterSize",
    "minCtas",
    "maxCtas",
    "netName",
    "splitShare"
})
public class NcclConfig extends Structure {

    /** {@code NCCL_CONFIG_UNDEF_INT}: "NCCL's default" ({@code INT_MIN}). */
    public static final int UNDEF_INT = Integer.MIN_VALUE;

    /** The magic NCCL checks first ({@code 0xcafebeef}). */
    public static final int MAGIC = 0xcafebeef;

    /** The version written: the layout's fields are those NCCL 2.18 knows. */
    public static final int VERSION = NcclVersion.code(2, 18, 0);

    /** {@code size_t size}: this structure's size, written by the constructor. */
    public long size;

    /** {@code unsigned int magic}. */
    public int magic = MAGIC;

    /** {@code unsigned int version}. */
    public int version = VERSION;

    /** {@code int blocking}: 0 for a non-blocking communicator (calls may return in progress). */
    public int blocking = UNDEF_INT;

    /** {@code int cgaClusterSize}. */
    public int cgaClusterSize = UNDEF_INT;

    /** {@code int minCTAs}. */
    public int minCtas = UNDEF_INT;

    /** {@code int maxCTAs}. */
    public int maxCtas = UNDEF_INT;

    /** {@code const char *netName}: null for NCCL's choice. */
    public Pointer netName;

    /** {@code int splitShare}: 1 to share resources with the parent on a split. */
    public int splitShare = UNDEF_INT;

    /** Creates a config with every field undefined, as {@code NCCL_CONFIG_INITIALIZER}. */
    public NcclConfig() {
        size = size();
    }

    /**
     * Creates the config of a non-blocking communicator ({@code blocking = 0}), the kind that
     * {@code ncclCommAbort} can stop safely.
     *
     * @return the config
     */
    public static NcclConfig nonBlocking() {
        NcclConfig config = new NcclConfig();
        config.blocking = 0;
        return config;
    }
}
