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
package ai.djl.distributed.fsdp;

import com.sun.jna.Function;
import com.sun.jna.NativeLibrary;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sets glibc's mmap threshold at run time ({@code mallopt(M_MMAP_THRESHOLD, bytes)}, through JNA),
 * so that freed blocks of that size and more go back to the kernel at once. {@code bin/djlrun}
 * starts workers with a 32 MiB threshold so that DDP's step reuses its memory instead of faulting
 * it in again; FSDP allocates and frees a unit's worth of memory many times a step (autograd's
 * gradients of gathered parameters, the optimizer's temporaries), and on the single heap those
 * settings give, the freed blocks fragment it: resident memory grew by hundreds of MiB over the
 * first steps of the benchmark GPT, more than sharding saved. Process-wide; called once by a
 * trainer that shards. Stateless.
 */
final class HeapPolicy {

    private static final Logger logger = LoggerFactory.getLogger(HeapPolicy.class);
    private static final int M_MMAP_THRESHOLD = -3;

    private HeapPolicy() {}

    /**
     * Returns blocks of {@code bytes} and more to the kernel when freed.
     *
     * @param bytes the threshold
     * @return whether glibc took it (false off glibc)
     */
    static boolean returnBlocksFrom(long bytes) {
        try {
            Function mallopt = NativeLibrary.getInstance("c").getFunction("mallopt");
            boolean ok = mallopt.invokeInt(new Object[] {M_MMAP_THRESHOLD, (int) bytes}) == 1;
            if (ok) {
                logger.debug(
                        "FSDP: freed blocks of {} bytes and more go back to the kernel", bytes);
            }
            return ok;
        } catch (UnsatisfiedLinkError | RuntimeException e) {
            logger.debug(
                    "FSDP: mallopt unavailable ({}); the C heap keeps its settings", e.toString());
            return false;
        }
    }
}
