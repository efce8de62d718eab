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

import java.util.function.Supplier;

/**
 * A hint from the blocking methods of {@link ai.djl.distributed.pg.ProcessGroup} to backends: the
 * calling thread is about to wait for the operation it starts, so a backend with nothing queued may
 * run the operation on that thread instead of handing it to its own (two thread switches fewer on
 * every small collective). A backend may ignore it; ordering rules are unchanged.
 */
public final class CallerWaits {

    private static final ThreadLocal<Boolean> SET = new ThreadLocal<>();

    private CallerWaits() {}

    /**
     * Starts an operation with the hint set on this thread.
     *
     * @param start starts the operation
     * @param <T> what starting returns
     * @return what {@code start} returned
     */
    public static <T> T call(Supplier<T> start) {
        SET.set(Boolean.TRUE);
        try {
            return start.get();
        } finally {
            SET.remove();
        }
    }

    /**
     * Returns whether the calling thread will wait for the operation it is starting.
     *
     * @return whether the hint is set
     */
    public static boolean isSet() {
        return SET.get() != null;
    }
}
