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
package ai.djl.distributed.backend.cpu.algorithm;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.backend.cpu.reduce.TorchReductions;
import ai.djl.distributed.backend.cpu.transport.Deadline;
import ai.djl.distributed.backend.cpu.transport.OpSignature;
import ai.djl.distributed.backend.cpu.transport.PeerMemory;
import ai.djl.distributed.backend.cpu.transport.Reducer;
import ai.djl.distributed.backend.cpu.transport.ShmBoard;
import ai.djl.distributed.backend.cpu.transport.Transfer;
import ai.djl.distributed.backend.cpu.transport.Transport;
import ai.djl.ndarray.types.DataType;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * All an algorithm sees of its group, as gloo's algorithms see their context: this rank, the
 * group's size, the links to the peers (through the transport), the collective's sequence number
 * and signature, the deadline, the element type and reduction, and scratch space. Messages of one
 * collective are numbered by the algorithm; the sender and the receiver of a message must use the
 * same index. Used by one thread, for one collective.
 */
public final class CollectiveContext {

    /** A wait this long makes the transports check the messages that arrived early. */
    private static final long POKE_NANOS = 10_000_000L;

    private final Transport transport;
    private final long seq;
    private final OpSignature signature;
    private final Deadline deadline;
    private final DataType dataType;
    private final ReduceOp.Type reduceOp;
    private final ScratchSpace scratch;
    private final Reducer reducer;
    private final TorchReductions kernels;

    /**
     * Creates a context.
     *
     * @param transport the group's transport
     * @param seq the collective's sequence number
     * @param signature the collective's signature
     * @param deadline when the collective must be done
     * @param dataType the element type
     * @param reduceOp the element-wise reduction ({@code SUM} for AVG and PREMUL_SUM), or null
     * @param scratch the backend's scratch space
     * @param kernels the element-wise reductions (libtorch for large float operands, else Java)
     */
    public CollectiveContext(
            Transport transport,
            long seq,
            OpSignature signature,
            Deadline deadline,
            DataType dataType,
            ReduceOp.Type reduceOp,
            ScratchSpace scratch,
            TorchReductions kernels) {
        this.transport = transport;
        this.seq = seq;
        this.signature = signature;
        this.deadline = deadline;
        this.dataType = dataType;
        this.reduceOp = reduceOp;
        this.scratch = scratch;
        this.kernels = kernels;
        this.reducer =
                new Reducer() {
                    @Override
                    public int elementSize() {
                        return dataType.getNumOfBytes();
                    }

                    @Override
                    public void reduce(
                            ByteBuffer acc, int accOffset, ByteBuffer src, int srcOffset, int n) {
                        kernels.reduce(reduceOp, dataType, acc, accOffset, src, srcOffset, n);
                    }
                };
    }

    /**
     * Returns this rank.
     *
     * @return the rank
     */
    public int rank() {
        return transport.getRank();
    }

    /**
     * Returns the group's size.
     *
     * @return the size
     */
    public int size() {
        return transport.getSize();
    }

    /**
     * Returns the element size in bytes.
     *
     * @return the size of one element
     */
    public int elementSize() {
        return dataType.getNumOfBytes();
    }

    /**
     * Returns direct access to the peers' memory, where the transport has it.
     *
     * @return the peer memory, or null
     */
    public PeerMemory peerMemory() {
        return transport.peerMemory();
    }

    /**
     * Returns the group's shared-memory board.
     *
     * @return the board, or null where the group has none
     */
    public ShmBoard board() {
        return transport.board();
    }

    /**
     * Returns the collective's deadline: the group's timeout from its submission.
     *
     * @return the deadline
     */
    public Deadline deadline() {
        return deadline;
    }

    /**
     * Returns whether the group has a shared-memory board for small messages ({@link ShmBoard}).
     *
     * @return whether {@link #exchangeOnBoard} may be called
     */
    public boolean hasBoard() {
        return transport.board() != null;
    }

    /**
     * Posts {@code data}'s remaining bytes on the group's board and returns every rank's message,
     * in rank order, once all are posted. Every rank must call it.
     *
     * @param data at most {@link ShmBoard#SLOT_BYTES} bytes
     * @return the messages: read-only, valid until the group's next exchange
     */
    public ByteBuffer[] exchangeOnBoard(ByteBuffer data) {
        return transport.board().exchange(seq, signature, data, deadline, transport);
    }

    /**
     * Posts the send of {@code data}'s remaining bytes to {@code peer}.
     *
     * @param peer the receiver
     * @param index the message's index within this collective
     * @param data the bytes, unchanged until the transfer completes
     * @return the transfer
     */
    public Transfer send(int peer, int index, ByteBuffer data) {
        return transport.send(peer, Transport.collectiveSlot(seq, index), signature, data);
    }

    /**
     * Posts the receive of a message from {@code peer} into {@code into}'s remaining bytes.
     *
     * @param peer the sender
     * @param index the message's index within this collective
     * @param into where the bytes go
     * @return the transfer
     */
    public Transfer recv(int peer, int index, ByteBuffer into) {
        return transport.recv(peer, Transport.collectiveSlot(seq, index), signature, into);
    }

    /**
     * Posts a receive from {@code peer} that reduces the message into {@code acc} with the
     * collective's reduction as it arrives (no copy of the message is kept).
     *
     * @param peer the sender
     * @param index the message's index within this collective
     * @param acc the accumulator, untouched by anything else until the transfer completes
     * @return the transfer
     */
    public Transfer recvReduce(int peer, int index, ByteBuffer acc) {
        return transport.recvReduce(
                peer, Transport.collectiveSlot(seq, index), signature, acc, reducer);
    }

    /**
     * Waits for transfers, in order, until the collective's deadline.
     *
     * @param transfers the transfers
     */
    public void await(Transfer... transfers) {
        for (Transfer t : transfers) {
            if (!t.isDone() && !t.awaitQuietly(POKE_NANOS)) {
                // Waiting long: have every transport compare the messages that came before this
                // collective began with it (begins are applied lazily), so a mismatch shows now.
                transport.poke();
            }
            t.await(deadline);
        }
    }

    /**
     * Fails the group with {@code cause}, telling the peers (as the collective's runner would once
     * the algorithm throws); for algorithms that must make sure the peers hear of it first.
     *
     * @param cause the failure
     */
    public void abort(CommunicationException cause) {
        transport.abort(cause);
    }

    /**
     * Throws the group's failure, if it has failed.
     *
     * @throws CommunicationException the failure
     */
    public void checkHealthy() {
        CommunicationException failure = transport.getFailure();
        if (failure != null) {
            throw new CommunicationException(
                    signature + " #" + seq + " stopped: " + failure.getMessage(),
                    failure.getPeerRank(),
                    failure);
        }
    }

    /**
     * Reduces {@code count} elements of {@code src} into {@code dst} with the collective's
     * reduction.
     *
     * @param dst the accumulator
     * @param dstOffset the accumulator's byte offset
     * @param src the other operand
     * @param srcOffset its byte offset
     * @param count the number of elements
     */
    public void reduce(ByteBuffer dst, int dstOffset, ByteBuffer src, int srcOffset, int count) {
        kernels.reduce(reduceOp, dataType, dst, dstOffset, src, srcOffset, count);
    }

    /**
     * Returns scratch space of at least {@code bytes}, little-endian, position 0 and limit {@code
     * bytes}. Scratch {@code slot} 0 and 1 are distinct buffers; both are reused by later
     * collectives.
     *
     * @param slot which scratch buffer, 0 or 1
     * @param bytes the size needed
     * @return the buffer
     */
    public ByteBuffer scratch(int slot, int bytes) {
        return scratch.get(slot, bytes);
    }

    /**
     * Returns a little-endian view of {@code length} bytes of {@code buffer} from {@code offset}.
     *
     * @param buffer the buffer
     * @param offset the first byte
     * @param length the number of bytes
     * @return the view, with position 0 and limit {@code length}
     */
    public static ByteBuffer slice(ByteBuffer buffer, int offset, int length) {
        return buffer.slice(offset, length).order(ByteOrder.LITTLE_ENDIAN);
    }
}
