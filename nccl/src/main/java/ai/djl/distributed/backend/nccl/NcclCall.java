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
package ai.djl.distributed.backend.nccl;

import ai.djl.distributed.backend.nccl.NcclOps.Reduction;

import com.sun.jna.Pointer;

import java.util.function.ToIntFunction;

/**
 * One NCCL call of a collective's plan, with device addresses in place of arrays. {@link NcclPlans}
 * turns each collective of the process-group API into a list of these; {@link NcclCommunicator}
 * issues a list as one NCCL group. Keeping the plan apart from the native calls lets the plans be
 * checked against the collectives' meaning on any machine, for any number of ranks.
 *
 * <p>Counts are in elements of {@code type}; addresses are device addresses (or, in tests, offsets
 * into a model of device memory). Immutable.
 */
public sealed interface NcclCall {

    /**
     * The element type of the call's buffers.
     *
     * @return the type
     */
    NcclDataType type();

    /**
     * Enqueues the call: NCCL's function of the same name, on a communicator and stream.
     *
     * @param nccl NCCL
     * @param comm the communicator
     * @param stream the stream
     * @param op NCCL's operator for a reduction (made for this call where it is a PREMUL_SUM)
     * @return NCCL's result
     */
    int enqueue(NcclLibrary nccl, Pointer comm, Pointer stream, ToIntFunction<Reduction> op);

    /**
     * NCCL's name of the call, e.g. {@code ncclAllReduce}.
     *
     * @return the name
     */
    default String nativeName() {
        return "nccl" + getClass().getSimpleName();
    }

    private static Pointer p(long address) {
        return new Pointer(address);
    }

    /**
     * {@code ncclAllReduce}.
     *
     * @param send the input
     * @param recv the output (may equal the input)
     * @param count the elements of each
     * @param type the element type
     * @param reduction the reduction
     */
    record AllReduce(long send, long recv, long count, NcclDataType type, Reduction reduction)
            implements NcclCall {
        @Override
        public int enqueue(
                NcclLibrary nccl, Pointer comm, Pointer stream, ToIntFunction<Reduction> op) {
            return nccl.ncclAllReduce(
                    p(send), p(recv), count, type.code(), op.applyAsInt(reduction), comm, stream);
        }
    }

    /**
     * {@code ncclBroadcast}.
     *
     * @param send the input, read on the root only
     * @param recv the output on every rank
     * @param count the elements of each
     * @param type the element type
     * @param root the root rank
     */
    record Broadcast(long send, long recv, long count, NcclDataType type, int root)
            implements NcclCall {
        @Override
        public int enqueue(
                NcclLibrary nccl, Pointer comm, Pointer stream, ToIntFunction<Reduction> op) {
            return nccl.ncclBroadcast(p(send), p(recv), count, type.code(), root, comm, stream);
        }
    }

    /**
     * {@code ncclReduce}.
     *
     * @param send the input
     * @param recv the output, written on the root only
     * @param count the elements of each
     * @param type the element type
     * @param reduction the reduction
     * @param root the root rank
     */
    record Reduce(
            long send, long recv, long count, NcclDataType type, Reduction reduction, int root)
            implements NcclCall {
        @Override
        public int enqueue(
                NcclLibrary nccl, Pointer comm, Pointer stream, ToIntFunction<Reduction> op) {
            return nccl.ncclReduce(
                    p(send),
                    p(recv),
                    count,
                    type.code(),
                    op.applyAsInt(reduction),
                    root,
                    comm,
                    stream);
        }
    }

    /**
     * {@code ncclAllGather}: every rank's {@code sendCount} elements, rank-major, into {@code
     * recv}.
     *
     * @param send the input
     * @param recv the output, the group's size times the input
     * @param sendCount the elements of the input
     * @param type the element type
     */
    record AllGather(long send, long recv, long sendCount, NcclDataType type) implements NcclCall {
        @Override
        public int enqueue(
                NcclLibrary nccl, Pointer comm, Pointer stream, ToIntFunction<Reduction> op) {
            return nccl.ncclAllGather(p(send), p(recv), sendCount, type.code(), comm, stream);
        }
    }

    /**
     * {@code ncclReduceScatter}: block j of every rank's input reduced into rank j's output.
     *
     * @param send the input, the group's size times the output
     * @param recv the output
     * @param recvCount the elements of the output
     * @param type the element type
     * @param reduction the reduction
     */
    record ReduceScatter(
            long send, long recv, long recvCount, NcclDataType type, Reduction reduction)
            implements NcclCall {
        @Override
        public int enqueue(
                NcclLibrary nccl, Pointer comm, Pointer stream, ToIntFunction<Reduction> op) {
            return nccl.ncclReduceScatter(
                    p(send),
                    p(recv),
                    recvCount,
                    type.code(),
                    op.applyAsInt(reduction),
                    comm,
                    stream);
        }
    }

    /**
     * {@code ncclSend}.
     *
     * @param buffer the data
     * @param count its elements
     * @param type the element type
     * @param peer the receiving rank (may be this rank, inside a group)
     */
    record Send(long buffer, long count, NcclDataType type, int peer) implements NcclCall {
        @Override
        public int enqueue(
                NcclLibrary nccl, Pointer comm, Pointer stream, ToIntFunction<Reduction> op) {
            return nccl.ncclSend(p(buffer), count, type.code(), peer, comm, stream);
        }
    }

    /**
     * {@code ncclRecv}.
     *
     * @param buffer where the data goes
     * @param count its elements
     * @param type the element type
     * @param peer the sending rank (may be this rank, inside a group)
     */
    record Recv(long buffer, long count, NcclDataType type, int peer) implements NcclCall {
        @Override
        public int enqueue(
                NcclLibrary nccl, Pointer comm, Pointer stream, ToIntFunction<Reduction> op) {
            return nccl.ncclRecv(p(buffer), count, type.code(), peer, comm, stream);
        }
    }
}
