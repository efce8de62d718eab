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

import com.sun.jna.Library;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.PointerByReference;

/**
 * The NCCL C API ({@code nccl.h}) as JNA sees it, for NCCL 2.18 and later: every function returns
 * an {@code ncclResult_t} ({@link NcclResult}), but for the two that return a message. A {@code
 * ncclComm_t}, a {@code cudaStream_t} and a device buffer are {@link Pointer}s; a {@code size_t}
 * count is a {@code long} (64-bit Linux); data types and reduce ops are the codes of {@link
 * NcclDataType} and {@link NcclRedOp} (or a PreMulSum op's code).
 *
 * <p>NCCL's own rules hold: calls on one communicator must not run concurrently (one lock per
 * communicator), and a collective only enqueues work on the stream given. Load it with {@link
 * NcclLocator}, never directly: a process must not load a second NCCL.
 */
public interface NcclLibrary extends Library {

    /** {@code NCCL_SPLIT_NOCOLOR}: a rank that takes no part in the split (gets a null comm). */
    int SPLIT_NOCOLOR = -1;

    /** {@code ncclScalarDevice}: a PreMulSum scalar in device memory, read when the op runs. */
    int SCALAR_DEVICE = 0;

    /** {@code ncclScalarHostImmediate}: a PreMulSum scalar on the host, read at creation. */
    int SCALAR_HOST_IMMEDIATE = 1;

    /**
     * {@code ncclGetVersion}: the library's version code ({@link NcclVersion#fromCode}).
     *
     * @param version receives the code
     * @return the result code
     */
    int ncclGetVersion(IntByReference version);

    /**
     * {@code ncclGetUniqueId}: a new id for a communicator, made on one rank and shared with the
     * others (through the store, {@link UniqueIdExchange}).
     *
     * @param uniqueId receives the id
     * @return the result code
     */
    int ncclGetUniqueId(NcclUniqueId uniqueId);

    /**
     * {@code ncclCommInitRankConfig}: joins a communicator; with a non-blocking config it may
     * return {@code ncclInProgress}, to be polled with {@link #ncclCommGetAsyncError}.
     *
     * @param comm receives the communicator
     * @param nranks the number of ranks
     * @param commId the id, by value
     * @param rank this rank
     * @param config the config ({@link NcclConfig})
     * @return the result code
     */
    int ncclCommInitRankConfig(
            PointerByReference comm,
            int nranks,
            NcclUniqueId.ByValue commId,
            int rank,
            NcclConfig config);

    /**
     * {@code ncclCommSplit} (2.18+): a communicator of the ranks that pass the same colour, ordered
     * by key; every rank of {@code comm} must call it.
     *
     * @param comm the parent
     * @param color the colour, or {@link #SPLIT_NOCOLOR}
     * @param key the rank order within a colour
     * @param newcomm receives the new communicator (null for {@link #SPLIT_NOCOLOR})
     * @param config the config, or null for the parent's
     * @return the result code
     */
    int ncclCommSplit(
            Pointer comm, int color, int key, PointerByReference newcomm, NcclConfig config);

    /**
     * {@code ncclCommFinalize}: flushes the communicator's work before {@link #ncclCommDestroy}.
     *
     * @param comm the communicator
     * @return the result code
     */
    int ncclCommFinalize(Pointer comm);

    /**
     * {@code ncclCommDestroy}: frees a (finalized) communicator.
     *
     * @param comm the communicator
     * @return the result code
     */
    int ncclCommDestroy(Pointer comm);

    /**
     * {@code ncclCommAbort}: stops the communicator's work and frees it.
     *
     * @param comm the communicator
     * @return the result code
     */
    int ncclCommAbort(Pointer comm);

    /**
     * {@code ncclCommGetAsyncError}: the communicator's asynchronous state ({@code ncclInProgress}
     * while a non-blocking call runs).
     *
     * @param comm the communicator
     * @param asyncError receives the state's result code
     * @return the result code of the query
     */
    int ncclCommGetAsyncError(Pointer comm, IntByReference asyncError);

    /**
     * {@code ncclCommCount}: the communicator's number of ranks.
     *
     * @param comm the communicator
     * @param count receives it
     * @return the result code
     */
    int ncclCommCount(Pointer comm, IntByReference count);

    /**
     * {@code ncclCommCuDevice}: the CUDA device of the communicator.
     *
     * @param comm the communicator
     * @param device receives it
     * @return the result code
     */
    int ncclCommCuDevice(Pointer comm, IntByReference device);

    /**
     * {@code ncclCommUserRank}: this rank in the communicator.
     *
     * @param comm the communicator
     * @param rank receives it
     * @return the result code
     */
    int ncclCommUserRank(Pointer comm, IntByReference rank);

    /**
     * {@code ncclGetErrorString}: the text of a result code.
     *
     * @param result the result code
     * @return the text
     */
    String ncclGetErrorString(int result);

    /**
     * {@code ncclGetLastError}: the last error's detail, on this communicator or (null) any.
     *
     * @param comm the communicator, or null
     * @return the text, possibly empty
     */
    String ncclGetLastError(Pointer comm);

    /**
     * {@code ncclAllReduce}.
     *
     * @param sendbuff the input (may equal {@code recvbuff})
     * @param recvbuff the output
     * @param count elements
     * @param datatype an {@link NcclDataType} code
     * @param op an {@link NcclRedOp} code or a PreMulSum op
     * @param comm the communicator
     * @param stream the CUDA stream
     * @return the result code
     */
    int ncclAllReduce(
            Pointer sendbuff,
            Pointer recvbuff,
            long count,
            int datatype,
            int op,
            Pointer comm,
            Pointer stream);

    /**
     * {@code ncclBroadcast}.
     *
     * @param sendbuff the input (read on the root)
     * @param recvbuff the output
     * @param count elements
     * @param datatype an {@link NcclDataType} code
     * @param root the root rank
     * @param comm the communicator
     * @param stream the CUDA stream
     * @return the result code
     */
    int ncclBroadcast(
            Pointer sendbuff,
            Pointer recvbuff,
            long count,
            int datatype,
            int root,
            Pointer comm,
            Pointer stream);

    /**
     * {@code ncclReduce}.
     *
     * @param sendbuff the input
     * @param recvbuff the output (written on the root)
     * @param count elements
     * @param datatype an {@link NcclDataType} code
     * @param op an {@link NcclRedOp} code or a PreMulSum op
     * @param root the root rank
     * @param comm the communicator
     * @param stream the CUDA stream
     * @return the result code
     */
    int ncclReduce(
            Pointer sendbuff,
            Pointer recvbuff,
            long count,
            int datatype,
            int op,
            int root,
            Pointer comm,
            Pointer stream);

    /**
     * {@code ncclAllGather}.
     *
     * @param sendbuff the input, {@code sendcount} elements
     * @param recvbuff the output, {@code nranks * sendcount} elements
     * @param sendcount elements per rank
     * @param datatype an {@link NcclDataType} code
     * @param comm the communicator
     * @param stream the CUDA stream
     * @return the result code
     */
    int ncclAllGather(
            Pointer sendbuff,
            Pointer recvbuff,
            long sendcount,
            int datatype,
            Pointer comm,
            Pointer stream);

    /**
     * {@code ncclReduceScatter}.
     *
     * @param sendbuff the input, {@code nranks * recvcount} elements
     * @param recvbuff the output, {@code recvcount} elements
     * @param recvcount elements per rank
     * @param datatype an {@link NcclDataType} code
     * @param op an {@link NcclRedOp} code or a PreMulSum op
     * @param comm the communicator
     * @param stream the CUDA stream
     * @return the result code
     */
    int ncclReduceScatter(
            Pointer sendbuff,
            Pointer recvbuff,
            long recvcount,
            int datatype,
            int op,
            Pointer comm,
            Pointer stream);

    /**
     * {@code ncclSend}.
     *
     * @param sendbuff the data
     * @param count elements
     * @param datatype an {@link NcclDataType} code
     * @param peer the receiving rank
     * @param comm the communicator
     * @param stream the CUDA stream
     * @return the result code
     */
    int ncclSend(
            Pointer sendbuff, long count, int datatype, int peer, Pointer comm, Pointer stream);

    /**
     * {@code ncclRecv}.
     *
     * @param recvbuff the destination
     * @param count elements
     * @param datatype an {@link NcclDataType} code
     * @param peer the sending rank
     * @param comm the communicator
     * @param stream the CUDA stream
     * @return the result code
     */
    int ncclRecv(
            Pointer recvbuff, long count, int datatype, int peer, Pointer comm, Pointer stream);

    /**
     * {@code ncclGroupStart}: the calls up to {@link #ncclGroupEnd} run as one operation.
     *
     * @return the result code
     */
    int ncclGroupStart();

    /**
     * {@code ncclGroupEnd}.
     *
     * @return the result code
     */
    int ncclGroupEnd();

    /**
     * {@code ncclRedOpCreatePreMulSum} (2.11+): a sum with each input multiplied by a scalar of the
     * data type's width ({@link NcclOps#scalarBytes}).
     *
     * @param op receives the new op's code
     * @param scalar the scalar, on the host or the device
     * @param datatype an {@link NcclDataType} code
     * @param residence {@link #SCALAR_HOST_IMMEDIATE} or {@link #SCALAR_DEVICE}
     * @param comm the communicator the op belongs to
     * @return the result code
     */
    int ncclRedOpCreatePreMulSum(
            IntByReference op, Pointer scalar, int datatype, int residence, Pointer comm);

    /**
     * {@code ncclRedOpDestroy}.
     *
     * @param op the op's code
     * @param comm the communicator it belongs to
     * @return the result code
     */
    int ncclRedOpDestroy(int op, Pointer comm);
}
