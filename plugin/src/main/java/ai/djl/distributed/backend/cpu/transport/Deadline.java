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
package ai.djl.distributed.backend.cpu.transport;

import ai.djl.distributed.backend.Waits;

import java.time.Duration;

/**
 * When an operation must be done, with the timeout it came from (for messages).
 *
 * @param nanos the deadline, on {@link System#nanoTime()}'s clock
 * @param timeout the timeout the deadline was computed from
 */
public record Deadline(long nanos, Duration timeout) {

    /**
     * Returns the deadline {@code timeout} from now.
     *
     * @param timeout the timeout, positive; one longer than {@link Waits#LONGEST} (decades) waits
     *     that long
     * @return the deadline
     */
    public static Deadline after(Duration timeout) {
        // Capped before converting: toNanos() overflows past 292 years (ChronoUnit.FOREVER), and a
        // deadline near Long.MAX_VALUE would wrap when a waiter adds a grace period to it.
        return new Deadline(System.nanoTime() + Waits.capped(timeout).toNanos(), timeout);
    }

    /**
     * Returns the time left.
     *
     * @return nanoseconds left; zero or negative once passed
     */
    public long remainingNanos() {
        return nanos - System.nanoTime();
    }
}
