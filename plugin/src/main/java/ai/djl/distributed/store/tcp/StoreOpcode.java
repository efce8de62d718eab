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
    VALIDATE(0, Field.U32),
    SET(1, Field.KEY, Field.VALUE),
    COMPARE_SET(2, Field.KEY, Field.VALUE, Field.VALUE),
    GET(3, Field.KEY),
    ADD(4, Field.KEY, Field.I64),
    CHECK(5, Field.COUNT, Field.KEY),
    WAIT(6, Field.COUNT, Field.KEY),
    GETNUMKEYS(7),
    DELETE_KEY(8, Field.KEY),
    APPEND(9, Field.KEY, Field.VALUE),
    MULTI_GET(10, Field.COUNT, Field.KEY),
    MULTI_SET(11, Field.COUNT, Field.KEY, Field.VALUE),
    CANCEL_WAIT(12),
    PING(13, Field.U32),
    QUEUE_PUSH(14, Field.KEY, Field.VALUE),
    QUEUE_POP(15, Field.KEY),
    QUEUE_LEN(16, Field.KEY),
    LIST(17);

    /** One field of a request. */
    public enum Field {
        KEY,
        VALUE,
        I64,
        U32,
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
