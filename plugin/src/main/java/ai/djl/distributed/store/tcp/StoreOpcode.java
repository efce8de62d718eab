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

/**
 * The queries of PyTorch's TCPStore protocol (the {@code QueryType} of 2.2 and later), each owning
 * its wire byte and the shape of its request.
 *
 * <p>A shape lists the fields after the type byte: {@link Field#KEY} and {@link Field#VALUE} are a
 * u64 length and that many bytes, {@link Field#I64} and {@link Field#U32} are little-endian
 * integers, and {@link Field#COUNT} is a u64 count after which the remaining fields repeat that
 * many times.
 */
public enum StoreOpcode {
    /** Opens a connection: the U32 is the protocol's magic number; no reply. */
    VALIDATE(0, Field.U32),
    /** Sets a key's value; no reply. */
    SET(1, Field.KEY, Field.VALUE),
    /**
     * Sets a key to the second value if it holds the first, or is missing and the first is empty;
     * replies with the key's value after, or the first value if the key stays missing.
     */
    COMPARE_SET(2, Field.KEY, Field.VALUE, Field.VALUE),
    /** Replies with a key's value (empty if the key is missing: clients wait for it first). */
    GET(3, Field.KEY),
    /** Adds to a key's counter (created at 0); replies with the sum. */
    ADD(4, Field.KEY, Field.I64),
    /** Replies whether all the keys exist. */
    CHECK(5, Field.COUNT, Field.KEY),
    /** Replies once all the keys exist. */
    WAIT(6, Field.COUNT, Field.KEY),
    /** Replies with the number of keys. */
    GETNUMKEYS(7),
    /** Deletes a key; replies 1 if it existed, else 0. */
    DELETE_KEY(8, Field.KEY),
    /** Appends bytes to a key's value (created if missing); no reply. */
    APPEND(9, Field.KEY, Field.VALUE),
    /** Replies with the values of several keys. */
    MULTI_GET(10, Field.COUNT, Field.KEY),
    /** Sets several keys; no reply. */
    MULTI_SET(11, Field.COUNT, Field.KEY, Field.VALUE),
    /** Cancels this connection's pending {@link #WAIT}. */
    CANCEL_WAIT(12),
    /** Replies with the same U32: a liveness check (PyTorch 2.4 and later). */
    PING(13, Field.U32),
    /** Pushes a value onto the queue named by the key; no reply. */
    QUEUE_PUSH(14, Field.KEY, Field.VALUE),
    /** Pops the oldest value of the queue named by the key; replies 0 if the queue is empty. */
    QUEUE_POP(15, Field.KEY),
    /** Replies with the length of the queue named by the key. */
    QUEUE_LEN(16, Field.KEY),
    /** Replies with every key. */
    LIST(17);

    /** One field of a request. */
    public enum Field {
        /** A key: its u64 length, then its bytes. */
        KEY,
        /** A value: its u64 length, then its bytes. */
        VALUE,
        /** A little-endian signed 64-bit integer. */
        I64,
        /** A little-endian unsigned 32-bit integer. */
        U32,
        /** A u64 count: the fields after it repeat that many times. */
        COUNT
    }

    private static final StoreOpcode[] BY_CODE = new StoreOpcode[256];

    static {
        for (StoreOpcode op : values()) {
            BY_CODE[op.code] = op;
        }
    }

    private final int code;
    private final Field[] shape;

    StoreOpcode(int code, Field... shape) {
        this.code = code;
        this.shape = shape;
    }

    /**
     * Returns the wire byte.
     *
     * @return the query type
     */
    public int code() {
        return code;
    }

    Field[] shape() {
        return shape;
    }

    /**
     * Returns the opcode of a wire byte.
     *
     * @param code the byte, 0 to 255
     * @return the opcode, or {@code null} if the protocol has none
     */
    public static StoreOpcode of(int code) {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : null;
    }
}
