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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.sun.jna.Pointer;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

class NcclStructuresTest {

    @Test
    void aUniqueIdIs128BytesAndKeepsThem() {
        assertEquals(128, new NcclUniqueId().size());
        byte[] bytes = new byte[128];
        new Random(7).nextBytes(bytes);
        NcclUniqueId id = NcclUniqueId.of(bytes);
        assertArrayEquals(bytes, id.toBytes());
        NcclUniqueId.ByValue byValue = id.byValue();
        assertEquals(128, byValue.size());
        assertArrayEquals(bytes, byValue.getPointer().getByteArray(0, 128));
        assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.of(new byte[127]));
        assertThrows(IllegalArgumentException.class, () -> NcclUniqueId.of(null));
    }

    @Test
    void theConfigHasNcclsLayoutAndInitializer() {
        // ncclConfig_v21700 on LP64: size_t at 0, two unsigned at 8 and 12, four ints from 16,
        // a pointer at 32, an int at 40, padded to 48.
        NcclConfig config = new NcclConfig();
        config.write();
        Pointer p = config.getPointer();
        assertEquals(48, config.size());
        assertEquals(48L, p.getLong(0));
        assertEquals(0xcafebeef, p.getInt(8));
        assertEquals(21800, p.getInt(12));
        for (int offset : new int[] {16, 20, 24, 28, 40}) {
            assertEquals(Integer.MIN_VALUE, p.getInt(offset), "offset " + offset);
        }
        assertEquals(0L, p.getLong(32));
        NcclConfig nonBlocking = NcclConfig.nonBlocking();
        nonBlocking.write();
        assertEquals(0, nonBlocking.getPointer().getInt(16));
        assertEquals(Integer.MIN_VALUE, nonBlocking.getPointer().getInt(20));
    }

    @Test
    void enumsCarryNcclsValues() {
        // From nccl.h: ncclResult_t, ncclRedOp_t, ncclDataType_t.
        assertEquals(5, NcclResult.INVALID_USAGE.code());
        assertEquals("ncclInProgress", NcclResult.of(7).nativeName());
        assertEquals(NcclResult.REMOTE_ERROR, NcclResult.of(6));
        assertThrows(IllegalArgumentException.class, () -> NcclResult.of(8));
        assertEquals(4, NcclRedOp.AVG.code());
        assertEquals(1, NcclRedOp.PROD.code());
        assertEquals("ncclMax", NcclRedOp.MAX.nativeName());
        assertEquals(9, NcclDataType.BFLOAT16.code());
        assertEquals(7, NcclDataType.FLOAT32.code());
        assertEquals(5, NcclDataType.UINT64.code());
        assertEquals(2, NcclDataType.FLOAT16.width());
        // Every name as nccl.h and cuda.h spell it.
        List<String> results = new ArrayList<>();
        for (NcclResult r : NcclResult.values()) {
            results.add(r.code() + " " + r.nativeName());
        }
        assertEquals(
                List.of(
                        "0 ncclSuccess",
                        "1 ncclUnhandledCudaError",
                        "2 ncclSystemError",
                        "3 ncclInternalError",
                        "4 ncclInvalidArgument",
                        "5 ncclInvalidUsage",
                        "6 ncclRemoteError",
                        "7 ncclInProgress"),
                results);
        List<String> types = new ArrayList<>();
        for (NcclDataType t : NcclDataType.values()) {
            types.add(t.code() + " " + t.nativeName());
        }
        assertEquals(
                List.of(
                        "0 ncclInt8",
                        "1 ncclUint8",
                        "2 ncclInt32",
                        "3 ncclUint32",
                        "4 ncclInt64",
                        "5 ncclUint64",
                        "6 ncclFloat16",
                        "7 ncclFloat32",
                        "8 ncclFloat64",
                        "9 ncclBfloat16"),
                types);
        assertEquals("ncclProd", NcclRedOp.PROD.nativeName());
        assertEquals("ncclAvg", NcclRedOp.AVG.nativeName());
        assertEquals("CUDA_SUCCESS", CudaResult.nameOf(0));
        assertEquals("CUDA_ERROR_INSUFFICIENT_DRIVER", CudaResult.nameOf(35));
        assertEquals("CUDA_ERROR_NO_DEVICE", CudaResult.nameOf(100));
        assertEquals("CUDA_ERROR_NOT_READY", CudaResult.nameOf(600));
        assertEquals("CUresult 999", CudaResult.nameOf(999));
    }
}
