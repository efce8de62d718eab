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

/**
 * A collective or point-to-point operation failed: a peer died or closed its group, the ranks
 * disagreed on the operation (its kind, size, data type or order), or the operation ran past the
 * group's timeout. The message names the peer rank and the operation; {@link #getPeerRank()} gives
 * the rank, or -1 when no single peer is to blame.
 *
 * <p>After such a failure the backend that raised it is unusable: every later operation on it fails
 * at once with the same cause, as an aborted NCCL communicator does. Destroy the group and create a
 * new one to continue.
 */
public class CommunicationException extends DistributedException {

    private static final long serialVersionUID = 1L;

    /** The rank whose link failed, or -1 if none in particular. */
    private final int peerRank;

    /**
     * Creates the exception.
     *
     * @param message what failed, naming the peer and the operation
     * @param peerRank the group rank of the peer at fault, or -1
     */
    public CommunicationException(String message, int peerRank) {
        super(message);
        this.peerRank = peerRank;
    }

    /**
     * Creates the exception with a cause.
     *
     * @param message what failed, naming the peer and the operation
     * @param peerRank the group rank of the peer at fault, or -1
     * @param cause the underlying failure
     */
    public CommunicationException(String message, int peerRank, Throwable cause) {
        super(message, cause);
        this.peerRank = peerRank;
    }

    /**
     * Returns the group rank of the peer at fault.
     *
     * @return the rank, or -1 when no single peer is to blame
     */
    public int getPeerRank() {
        return peerRank;
    }
}
