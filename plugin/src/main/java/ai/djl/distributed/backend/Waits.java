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
package ai.djl.distributed.backend;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Bounded waits that an interrupt does not cut short, for a thread that must not let go of memory
 * while an operation may still use it (an interrupted caller is often the one that aborted it).
 */
public final class Waits {

    /**
     * The longest timeout honoured as given, about 73 years: deadlines on {@link
     * System#nanoTime()}'s clock computed from it, slack added, never overflow.
     */
    public static final Duration LONGEST = Duration.ofNanos(Long.MAX_VALUE / 4);

    private Waits() {}

    /**
     * Returns the timeout, or {@link #LONGEST} where it is longer: a timeout of centuries waits as
     * one of decades does, and the arithmetic on it stays in range.
     *
     * @param timeout a timeout, not null
     * @return the timeout, at most {@link #LONGEST}
     */
    public static Duration capped(Duration timeout) {
        return timeout.compareTo(LONGEST) > 0 ? LONGEST : timeout;
    }

    /**
     * Waits until {@code future} completes, in any way, or until {@code deadlineNanos}, ignoring
     * interrupts; the thread's interrupt status is restored on return.
     *
     * @param future what to wait for
     * @param deadlineNanos when to give up, on {@link System#nanoTime()}'s clock
     * @return whether the future completed
     */
    public static boolean awaitUninterruptibly(CompletableFuture<?> future, long deadlineNanos) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    future.get(
                            Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
                    return true;
                } catch (ExecutionException | CancellationException e) {
                    return true;
                } catch (TimeoutException e) {
                    return false;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
