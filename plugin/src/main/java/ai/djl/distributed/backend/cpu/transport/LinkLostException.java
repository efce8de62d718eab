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
import ai.djl.distributed.backend.AbortNotices;

/**
 * The connection to a peer ended without the peer saying why: end of stream, a reset, a broken
 * pipe, a ring whose producer is gone. The peer may have died, or may have aborted its group with a
 * reason it could not send in band; {@link LinkTransport} then looks for that reason in the store
 * ({@link ai.djl.distributed.backend.AbortNotices}) before it reports the loss.
 */
final class LinkLostException extends CommunicationException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was lost, naming the peer
     * @param peerRank the peer
     * @param cause the I/O failure, or null at a plain end of stream
     */
    LinkLostException(String message, int peerRank, Throwable cause) {
        super(message, peerRank, cause);
    }

    /**
     * Returns whether a failure is, or wraps, a lost connection.
     *
     * @param e the failure
     * @return whether a {@link LinkLostException} is in its cause chain
     */
    static boolean isLoss(Throwable e) {
        if (AbortNotices.isExplained(e)) {
            return false; // the peer's reason is known already
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof LinkLostException) {
                return true;
            }
        }
        return false;
    }
}
