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
package ai.djl.distributed.backend.cpu;

import ai.djl.distributed.memory.NdRegion;
import ai.djl.ndarray.NDArray;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;

/**
 * Several arrays as one contiguous buffer, for coalesced collectives. One array is used in place;
 * several are copied into a buffer at issue and copied back by {@link #unpack()}.
 */
final class Packed {

    private final NdRegion[] regions;
    private final ByteBuffer buffer;
    private final int count;

    private Packed(NdRegion[] regions, ByteBuffer buffer, int count) {
        this.regions = regions;
        this.buffer = buffer;
        this.count = count;
    }

    static Packed of(List<NDArray> arrays, CpuBackend backend) {
        NdRegion[] regions = new NdRegion[arrays.size()];
        long count = 0;
        for (int i = 0; i < regions.length; i++) {
            regions[i] = backend.region(arrays.get(i));
            count += arrays.get(i).size();
        }
        int n = Math.toIntExact(count);
        if (regions.length == 1) {
            return new Packed(regions, regions[0].buffer(), n);
        }
        int bytes = 0;
        for (NdRegion r : regions) {
            bytes += r.buffer().limit();
        }
        ByteBuffer packed = ByteBuffer.allocateDirect(bytes).order(ByteOrder.LITTLE_ENDIAN);
        for (NdRegion r : regions) {
            packed.put(r.buffer().duplicate().clear());
        }
        return new Packed(regions, packed.clear(), n);
    }

    ByteBuffer buffer() {
        return buffer;
    }

    int count() {
        return count;
    }

    /** Copies the results back into the arrays. */
    void unpack() {
        if (regions.length == 1) {
            regions[0].writeBack();
            return;
        }
        int offset = 0;
        for (NdRegion r : regions) {
            int n = r.buffer().limit();
            r.buffer().put(0, buffer, offset, n);
            offset += n;
            r.writeBack();
        }
    }
}
