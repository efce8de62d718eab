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

import ai.djl.distributed.store.tcp.PendingCall.Reply;
import ai.djl.distributed.store.tcp.PendingCall.WaitResult;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * A reply shape with the Java type its value has: a query is sent with the {@code ReplyType} of its
 * opcode, and the call returns that type. The decoder ({@link StoreResponseDecoder}) completes a
 * call with an untyped value of its shape; this is the one place that value gets its type.
 * Immutable.
 *
 * @param <T> the type of the reply's value
 */
final class ReplyType<T> {

    /** No reply (SET, APPEND, MULTI_SET, QUEUE_PUSH, VALIDATE): the call is done once written. */
    static final ReplyType<Void> NONE = new ReplyType<>(Reply.NONE, value -> null);

    /** One unsigned byte (CHECK). */
    static final ReplyType<Integer> U8 = new ReplyType<>(Reply.U8, Integer.class::cast);

    /** A little-endian i64 (ADD, GETNUMKEYS, DELETE_KEY, QUEUE_LEN). */
    static final ReplyType<Long> I64 = new ReplyType<>(Reply.I64, Long.class::cast);

    /** A little-endian u32, widened to a long (PING). */
    static final ReplyType<Long> U32 = new ReplyType<>(Reply.U32, Long.class::cast);

    /** A value (GET, COMPARE_SET). */
    static final ReplyType<byte[]> BYTES = new ReplyType<>(Reply.BYTES, byte[].class::cast);

    /** One value per key, in the keys' order, in a list of the caller's own (MULTI_GET). */
    static final ReplyType<List<byte[]>> MULTI_BYTES =
            new ReplyType<>(Reply.MULTI_BYTES, ReplyType::values);

    /** The popped value alone, or no value if the queue was empty (QUEUE_POP). */
    static final ReplyType<byte[][]> QUEUE_POP =
            new ReplyType<>(Reply.QUEUE_POP, byte[][].class::cast);

    /** How a WAIT ended: the keys came, or it was cancelled first (WAIT). */
    static final ReplyType<WaitResult> WAIT = new ReplyType<>(Reply.WAIT, WaitResult.class::cast);

    /** WAIT_CANCELED (CANCEL_WAIT). */
    static final ReplyType<WaitResult> CANCEL =
            new ReplyType<>(Reply.CANCEL, WaitResult.class::cast);

    private final Reply shape;
    private final Function<Object, T> type;

    private ReplyType(Reply shape, Function<Object, T> type) {
        this.shape = shape;
        this.type = type;
    }

    /**
     * Returns the shape the decoder reads.
     *
     * @return the reply's shape on the wire
     */
    Reply shape() {
        return shape;
    }

    /**
     * Gives a decoded value its type.
     *
     * @param value what the decoder completed the call with, for this shape
     * @return the value, typed
     * @throws ClassCastException if the decoder and this type disagree (a bug)
     */
    T of(Object value) {
        return type.apply(value);
    }

    private static List<byte[]> values(Object decoded) {
        List<?> values = (List<?>) decoded;
        List<byte[]> out = new ArrayList<>(values.size());
        for (Object value : values) {
            out.add((byte[]) value);
        }
        return out;
    }
}
