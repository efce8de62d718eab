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

import ai.djl.distributed.store.StoreException;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** A query sent by a client and the shape of the reply it awaits. */
final class PendingCall {

    /** The shape of a reply. */
    enum Reply {
        /** No reply: the call is done once the query is written. */
        NONE,
        /** One byte (CHECK). */
        U8,
        /** A little-endian i64 (ADD, GETNUMKEYS, DELETE_KEY, QUEUE_LEN). */
        I64,
        /** A little-endian u32 (PING). */
        U32,
        /** A u64 length and bytes (GET, COMPARE_SET). */
        BYTES,
        /** One BYTES per key (MULTI_GET). */
        MULTI_BYTES,
        /** An i64 queue length, then BYTES if it was positive (QUEUE_POP). */
        QUEUE_POP,
        /** STOP_WAITING, or WAIT_CANCELED when cancelled before the keys came (WAIT). */
        WAIT,
        /** WAIT_CANCELED (CANCEL_WAIT). */
        CANCEL
    }

    /** What a WAIT ended with. */
    enum WaitResult {
        STOPPED,
        CANCELED
    }

    final Reply reply;
    final int count; // values expected by MULTI_BYTES
    final CompletableFuture<Object> future = new CompletableFuture<>();
    final List<byte[]> values; // MULTI_BYTES progress
    private final StoreOpcode opcode;
    private final List<String> wireKeys;

    PendingCall(Reply reply, int count, StoreRequest request) {
        this.reply = reply;
        this.count = count;
        this.opcode = request.opcode();
        this.wireKeys = request.keys();
        this.values = reply == Reply.MULTI_BYTES ? new ArrayList<>(count) : null;
    }

    /**
     * Fails the call because its connection failed, naming the query.
     *
     * @param failure why the connection failed
     */
    void fail(Throwable failure) {
        future.completeExceptionally(
                new StoreException(description() + ": " + failure.getMessage(), failure));
    }

    /**
     * Describes the query for a failure message, naming the user's keys; built only on failure.
     *
     * @return the opcode, and the keys if any, e.g. {@code GET [k]}
     */
    String description() {
        return wireKeys.isEmpty() ? opcode.toString() : opcode + " " + WireKeys.toUser(wireKeys);
    }
}
