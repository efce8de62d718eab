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

import ai.djl.distributed.ReduceOp;
import ai.djl.ndarray.types.DataType;

/**
 * What a message belongs to, sent in every frame header so that ranks which disagree on a
 * collective's kind, data type, size, reduction or root are told so instead of exchanging
 * mismatched bytes.
 *
 * @param opcode the operation (see {@link #name(int)} for the names)
 * @param dtype the data type's code (its DJL {@code DataType} ordinal)
 * @param reduceOp the reduction's code ({@code ReduceOp.Type} ordinal), or 0
 * @param root the root rank, or the tag for point-to-point messages, or 0
 * @param count the operation's element count (per rank, as the caller passed it)
 */
public record OpSignature(int opcode, int dtype, int reduceOp, int root, long count) {

    /** No operation; a frame that carries only control information. */
    public static final int NONE = 0;

    /** {@code broadcast}. */
    public static final int BROADCAST = 1;

    /** {@code allReduce}. */
    public static final int ALL_REDUCE = 2;

    /** {@code reduce}. */
    public static final int REDUCE = 3;

    /** {@code allGather}. */
    public static final int ALL_GATHER = 4;

    /** {@code gather}. */
    public static final int GATHER = 5;

    /** {@code scatter}. */
    public static final int SCATTER = 6;

    /** {@code reduceScatter}. */
    public static final int REDUCE_SCATTER = 7;

    /** {@code allToAll}. */
    public static final int ALL_TO_ALL = 8;

    /** {@code barrier}. */
    public static final int BARRIER = 9;

    /** {@code send}/{@code recv}. */
    public static final int SEND = 10;

    /** The operations, indexed by opcode. */
    private static final String[] NAMES = {
        "NONE",
        "BROADCAST",
        "ALL_REDUCE",
        "REDUCE",
        "ALL_GATHER",
        "GATHER",
        "SCATTER",
        "REDUCE_SCATTER",
        "ALL_TO_ALL",
        "BARRIER",
        "SEND"
    };

    /**
     * Returns the name of an opcode.
     *
     * @param opcode the opcode
     * @return its name, or "OP#n" for an unknown one
     */
    public static String name(int opcode) {
        return opcode >= 0 && opcode < NAMES.length ? NAMES[opcode] : "OP#" + opcode;
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(name(opcode)).append('(');
        DataType[] types = DataType.values();
        sb.append(dtype >= 0 && dtype < types.length ? types[dtype] : "dtype#" + dtype);
        sb.append(" x ").append(count);
        if (opcode == ALL_REDUCE || opcode == REDUCE || opcode == REDUCE_SCATTER) {
            ReduceOp.Type[] ops = ReduceOp.Type.values();
            sb.append(", ")
                    .append(
                            reduceOp >= 0 && reduceOp < ops.length
                                    ? ops[reduceOp]
                                    : "op#" + reduceOp);
        }
        if (opcode == SEND) {
            sb.append(", tag ").append(root);
        } else if (opcode == BROADCAST
                || opcode == REDUCE
                || opcode == GATHER
                || opcode == SCATTER) {
            sb.append(", root ").append(root);
        }
        return sb.append(')').toString();
    }
}
