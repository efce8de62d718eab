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
package ai.djl.distributed.ddp;

/**
 * A scope in which {@link DistributedDataParallel#step()} does not synchronize gradients, as
 * PyTorch's {@code no_sync()}: steps inside update each rank's parameters from its own gradients,
 * with no communication. Obtained from {@link DistributedDataParallel#noSync()}; scopes nest, and
 * synchronization resumes when the outermost closes.
 *
 * <p>For gradient accumulation DJL needs no such scope: gradients add up over {@code backward}
 * calls until {@code step()}, and DDP reduces them there, once. Call {@code step()} every k
 * micro-batches.
 */
public final class NoSync implements AutoCloseable {

    private final Runnable release;
    private boolean closed;

    NoSync(Runnable release) {
        this.release = release;
    }

    /** Ends the scope. Idempotent. */
    @Override
    public void close() {
        if (!closed) {
            closed = true;
            release.run();
        }
    }
}
