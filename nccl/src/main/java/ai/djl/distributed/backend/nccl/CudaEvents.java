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

import ai.djl.distributed.DistributedException;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;

import java.util.ArrayDeque;

/**
 * The CUDA events of one communicator's collectives (without timing, as PyTorch's), reused once
 * completed: making one per collective costs a driver call and native memory each time.
 *
 * <p>Thread-safe. Owns the events it holds; {@link #close} destroys them, and events given back
 * afterwards are destroyed at once.
 */
final class CudaEvents implements AutoCloseable {

    private final CudaDriver cu;
    private final ArrayDeque<Pointer> free = new ArrayDeque<>(); // guarded by this
    private boolean closed; // guarded by this

    /**
     * Creates an empty pool.
     *
     * @param cu the driver
     */
    CudaEvents(CudaDriver cu) {
        this.cu = cu;
    }

    /**
     * An event: a completed one again where there is one. The caller has made the events' context
     * current.
     *
     * @return the event, the caller's until {@link #giveBack}
     * @throws DistributedException if the driver cannot make one
     */
    Pointer take() {
        synchronized (this) {
            Pointer e = free.pollFirst();
            if (e != null) {
                return e;
            }
        }
        PointerByReference made = new PointerByReference();
        int r = cu.cuEventCreate(made, CudaDriver.EVENT_DISABLE_TIMING);
        if (r != CudaResult.SUCCESS.code()) {
            throw new DistributedException("cuEventCreate -> " + NcclRuntime.describe(cu, r));
        }
        return made.getValue();
    }

    /**
     * Takes back an event.
     *
     * @param event the event
     * @param completed whether its work completed (else, failed or aborted, it is destroyed)
     */
    void giveBack(Pointer event, boolean completed) {
        synchronized (this) {
            if (completed && !closed) {
                free.push(event);
                return;
            }
        }
        cu.cuEventDestroy_v2(event);
    }

    /** Destroys the events held; the context must still exist and be current. Idempotent. */
    @Override
    public void close() {
        synchronized (this) {
            closed = true;
            for (Pointer e; (e = free.poll()) != null; ) {
                cu.cuEventDestroy_v2(e);
            }
        }
    }
}
