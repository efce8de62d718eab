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
package ai.djl.distributed.store;

import java.time.Duration;
import java.util.List;

/** A blocking store call ran out of time; the message names the keys, the duration and store. */
public class StoreTimeoutException extends StoreException {

    private static final long serialVersionUID = 1L;

    private final transient List<String> keys;

    /** How long the call waited. */
    private final Duration timeout;

    /**
     * Creates the exception.
     *
     * @param store the store, as {@code toString()} describes it
     * @param keys the user keys that were waited for
     * @param timeout how long the call waited
     */
    public StoreTimeoutException(String store, List<String> keys, Duration timeout) {
        this(store, keys, timeout, null);
    }

    /**
     * Creates the exception for a store that passed on another store's timeout (a {@link
     * PrefixStore} names its own user's keys).
     *
     * @param store the store, as {@code toString()} describes it
     * @param keys the user keys that were waited for
     * @param timeout how long the call waited
     * @param cause the underlying store's timeout, or {@code null}
     */
    public StoreTimeoutException(
            String store, List<String> keys, Duration timeout, StoreTimeoutException cause) {
        super(
                "Timed out after "
                        + timeout.toMillis()
                        + " ms waiting for keys "
                        + keys
                        + " in "
                        + store,
                cause);
        this.keys = List.copyOf(keys);
        this.timeout = timeout;
    }

    /**
     * Returns the keys that were waited for.
     *
     * @return the keys, as the caller passed them
     */
    public List<String> getKeys() {
        return keys;
    }

    /**
     * Returns how long the call waited.
     *
     * @return the timeout that expired
     */
    public Duration getTimeout() {
        return timeout;
    }
}
