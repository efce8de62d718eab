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
package ai.djl.distributed.store.tcp;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Memory that the connections of one {@link TcpStoreServer} may hold together for one purpose, on
 * behalf of clients the server does not control. The server keeps two: the bytes of partly received
 * requests (each connection's decoder claims what its unfinished request holds before it waits for
 * more bytes, and gives it back when the request completes or the connection ends), and the large
 * replies built for clients that have not read them yet (a MULTI_GET or LIST reply, claimed before
 * it is built and given back once it is sent or its connection ends). A claim that would pass the
 * limit is refused, and that connection alone is closed.
 *
 * <p>Thread-safe: one atomic counter, touched only by requests that span several reads or by large
 * replies, so the event loops do not contend on it.
 */
final class MemoryBudget {

    private final long limit;
    private final AtomicLong held = new AtomicLong();

    /**
     * Creates a budget.
     *
     * @param limit the most bytes the claims may hold together
     */
    MemoryBudget(long limit) {
        this.limit = limit;
    }

    /**
     * Claims bytes, unless that would take the total over the limit.
     *
     * @param bytes a positive amount
     * @return {@code true} if claimed; {@code false} (nothing claimed) if over the limit
     */
    boolean tryClaim(long bytes) {
        // a strict check (compare-and-set) so the total never passes the limit, even briefly
        long current;
        do {
            current = held.get();
            if (bytes > limit - current) {
                return false;
            }
        } while (!held.compareAndSet(current, current + bytes));
        return true;
    }

    /**
     * Gives back bytes claimed earlier.
     *
     * @param bytes a positive amount, at most what the caller claimed
     */
    void release(long bytes) {
        held.addAndGet(-bytes);
    }

    /**
     * Returns the bytes claimed now.
     *
     * @return the total claimed
     */
    long held() {
        return held.get();
    }

    /**
     * Returns the limit.
     *
     * @return the most bytes the claims may hold together
     */
    long limit() {
        return limit;
    }
}
