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

import ai.djl.distributed.CommunicationException;

import java.util.ArrayList;
import java.util.List;

/**
 * The transfers a {@link Link} finished or failed while holding its lock, to complete once it has
 * let go, so that a future's dependent stages never run while a link is held. Guarded by the link's
 * lock.
 */
final class Settlements {

    /** A finished transfer, and its failure or {@code null} for success. */
    record Settled(Transfer transfer, CommunicationException failure) {}

    private final ArrayList<Settled> settled = new ArrayList<>();

    /**
     * Records a transfer that completed.
     *
     * @param t the transfer
     */
    void finished(Transfer t) {
        settled.add(new Settled(t, null));
    }

    /**
     * Records a transfer that failed.
     *
     * @param t the transfer
     * @param e why
     */
    void failed(Transfer t, CommunicationException e) {
        settled.add(new Settled(t, e));
    }

    boolean isEmpty() {
        return settled.isEmpty();
    }

    /**
     * Takes what was recorded, in order, and forgets it.
     *
     * @return the settled transfers
     */
    List<Settled> drain() {
        List<Settled> done = List.copyOf(settled);
        settled.clear();
        return done;
    }
}
