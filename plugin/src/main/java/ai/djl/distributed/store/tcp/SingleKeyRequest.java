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

import io.netty.buffer.ByteBuf;

/**
 * Reads, without consuming anything, the layout of a request that names one key (SET, GET, ADD, and
 * CHECK or WAIT with a count of 1) in a read buffer, for the server's two fast paths: {@link
 * InPlaceRequests} in a pipeline and {@link IoUringConnection} without one. Each method returns an
 * index into the buffer, or {@link #INCOMPLETE} when the request needs bytes not received yet, or
 * {@link #ELSEWHERE} when it is not for a fast path (several keys, a length past the limits or past
 * the room the caller has); the decoder then serves or refuses it.
 */
final class SingleKeyRequest {

    /** The request is cut by the end of what was received. */
    static final int INCOMPLETE = -1;

    /** The request is not for a fast path, whole or not. */
    static final int ELSEWHERE = -2;

    private static final int OPCODE = 1;
    private static final int LENGTH = Long.BYTES;

    private SingleKeyRequest() {}

    /**
     * Returns where the key of the request at {@code at} starts: past its opcode, CHECK's and
     * WAIT's count, and the key's length.
     *
     * @param in the buffer
     * @param op the request's opcode, read at {@code at}
     * @param at the request's first byte
     * @param end the end of the bytes received
     * @return the key's first byte, or a status
     */
    static int keyAt(ByteBuf in, StoreOpcode op, int at, int end) {
        switch (op) {
            case SET:
            case GET:
            case ADD:
                return at + OPCODE + LENGTH;
            case CHECK:
            case WAIT:
                if (end - at < OPCODE + LENGTH) {
                    return INCOMPLETE;
                }
                // several keys: rare, and the decoder's
                return in.getLongLE(at + OPCODE) == 1 ? at + OPCODE + 2 * LENGTH : ELSEWHERE;
            default:
                return ELSEWHERE;
        }
    }

    /**
     * Returns where the key ends, its length just before {@code keyAt}.
     *
     * @param in the buffer
     * @param at the request's first byte
     * @param keyAt the key's first byte ({@link #keyAt})
     * @param end the end of the bytes received
     * @param maxKeyBytes the largest key served
     * @param maxRequestBytes the most key and value bytes of a request
     * @param room the most bytes the whole request may span
     * @return the index past the key, or a status
     */
    static int keyEnd(
            ByteBuf in,
            int at,
            int keyAt,
            int end,
            int maxKeyBytes,
            long maxRequestBytes,
            long room) {
        if (end < keyAt) {
            return INCOMPLETE;
        }
        long keyLength = in.getLongLE(keyAt - LENGTH);
        if (keyLength < 0
                || keyLength > maxKeyBytes
                || keyLength > maxRequestBytes
                || keyLength > room - (keyAt - at)) {
            return ELSEWHERE;
        }
        return keyLength > end - keyAt ? INCOMPLETE : keyAt + (int) keyLength;
    }

    /**
     * Returns where a SET's value ends, its length at {@code next}.
     *
     * @param in the buffer
     * @param at the request's first byte
     * @param next the index past the key
     * @param end the end of the bytes received
     * @param maxValueBytes the largest value the request limit leaves room for
     * @param room the most bytes the whole request may span
     * @return the index past the value, or a status
     */
    static int valueEnd(ByteBuf in, int at, int next, int end, long maxValueBytes, long room) {
        if (end - next < LENGTH) {
            return INCOMPLETE;
        }
        long valueLength = in.getLongLE(next);
        if (valueLength < 0
                || valueLength > maxValueBytes
                || valueLength > room - (next + LENGTH - at)) {
            return ELSEWHERE;
        }
        return valueLength > end - next - LENGTH ? INCOMPLETE : next + LENGTH + (int) valueLength;
    }
}
