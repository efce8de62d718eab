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
package ai.djl.distributed;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * An asynchronous collective or point-to-point operation, as c10d's {@code Work}: returned by the
 * {@code ...Async} methods of {@link ai.djl.distributed.pg.ProcessGroup}. The operation runs on its
 * backend's threads; its output arrays must not be read, and its input arrays not written, until it
 * completes.
 *
 * <p>Thread-safe.
 */
public interface Work {

    /**
     * Returns whether the operation has finished, successfully or not. Never blocks.
     *
     * @return whether it is done
     */
    boolean isCompleted();

    /**
     * Returns whether the operation has finished successfully. Never blocks.
     *
     * @return whether it succeeded
     */
    boolean isSuccess();

    /**
     * Returns why the operation failed. Never blocks.
     *
     * @return the failure, or null if it has not failed (yet)
     */
    Throwable getException();

    /**
     * Blocks until the operation completes or {@code timeout} passes, and rethrows its failure. The
     * operation keeps its own deadline (the group's timeout from when it started): a shorter {@code
     * timeout} here only stops waiting; it does not cancel the operation. An interrupt does: the
     * operation is aborted (failing the group, as any failed collective does), the wait goes on
     * until the backend has let go of the operation's arrays, and then it throws with the thread's
     * interrupt flag set.
     *
     * @param timeout how long to wait
     * @throws ai.djl.distributed.DistributedException if the operation failed (its cause), did not
     *     complete within {@code timeout}, or the waiting thread was interrupted
     */
    void waitFor(Duration timeout);

    /**
     * Blocks until the operation completes, and rethrows its failure. The wait is bounded by the
     * group's timeout, which every operation honours. An interrupt aborts the operation, as for
     * {@link #waitFor(Duration)}.
     *
     * @throws ai.djl.distributed.DistributedException if the operation failed or the waiting thread
     *     was interrupted
     */
    void waitFor();

    /**
     * Returns a future completed when the operation completes: normally on success, exceptionally
     * with its failure. Dependent stages run on the backend's thread unless given an executor: keep
     * them short.
     *
     * @return the future
     */
    CompletableFuture<Void> getFuture();
}
