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
package ai.djl.distributed.pg;

import ai.djl.ndarray.NDArray;

/**
 * One send or receive of a {@link ProcessGroup#batchIsendIrecv} batch, as {@code
 * torch.distributed.P2POp}. Immutable.
 */
public final class P2POp {

    private final boolean send;
    private final NDArray array;
    private final int peer;
    private final int tag;

    private P2POp(boolean send, NDArray array, int peer, int tag) {
        this.send = send;
        this.array = array;
        this.peer = peer;
        this.tag = tag;
    }

    /**
     * Returns a send.
     *
     * @param array the data
     * @param dst the receiver's group rank
     * @param tag pairs the send with a receive
     * @return the operation
     */
    public static P2POp isend(NDArray array, int dst, int tag) {
        return new P2POp(true, array, dst, tag);
    }

    /**
     * Returns a receive.
     *
     * @param array where the data goes
     * @param src the sender's group rank
     * @param tag pairs the receive with a send
     * @return the operation
     */
    public static P2POp irecv(NDArray array, int src, int tag) {
        return new P2POp(false, array, src, tag);
    }

    /**
     * Returns whether this is a send.
     *
     * @return true for a send, false for a receive
     */
    public boolean isSend() {
        return send;
    }

    /**
     * Returns the array.
     *
     * @return the array
     */
    public NDArray getArray() {
        return array;
    }

    /**
     * Returns the peer's group rank.
     *
     * @return the peer
     */
    public int getPeer() {
        return peer;
    }

    /**
     * Returns the tag.
     *
     * @return the tag
     */
    public int getTag() {
        return tag;
    }
}
