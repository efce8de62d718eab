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

import ai.djl.distributed.CommunicationException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One posted send or receive. It completes once, successfully or with a {@link
 * CommunicationException}; {@link #await(Deadline)} blocks until then or until a deadline.
 * Thread-safe.
 */
public final class Transfer {

    private final int peer;
    private final boolean send;
    private final OpSignature signature;
    private final long bytes;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    Transfer(int peer, boolean send, OpSignature signature, long bytes) {
        this.peer = peer;
        this.send = send;
        this.signature = signature;
        this.bytes = bytes;
    }

    /**
     * Returns the peer's rank.
     *
     * @return the rank
     */
    public int getPeer() {
        return peer;
    }

    /**
     * Returns whether the transfer has completed, successfully or not.
     *
     * @return whether it is done
     */
    public boolean isDone() {
        return done.isDone();
    }

    /**
     * Returns a future completed with the transfer: normally, or with its {@link
     * CommunicationException}. Dependent stages run on the thread that completes the transfer: the
     * transport's I/O thread, a thread posting to the same peer (which may find the message already
     * there, or finish a write), or a thread aborting the transport (after a failed collective, or
     * a send or receive past its timeout). Keep them short, and never wait in them for another
     * transfer.
     *
     * @return the future
     */
    public CompletableFuture<Void> future() {
        return done;
    }

    /**
     * Waits until the transfer completes.
     *
     * @param deadline when to give up
     * @throws CommunicationException if it failed, or if the deadline passed first (naming the peer
     *     and the operation)
     */
    public void await(Deadline deadline) {
        try {
            done.get(Math.max(0, deadline.remainingNanos()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CommunicationException(
                    "interrupted while waiting for rank " + peer + " in " + signature, peer, e);
        } catch (ExecutionException e) {
            CommunicationException f = (CommunicationException) e.getCause();
            String message = f.getMessage();
            if (f.getPeerRank() != peer) {
                // Another rank's failure reached us while we waited on this peer: say so, since
                // that peer may be the one at fault (a timeout propagates along the chain).
                message +=
                        " (this rank was waiting for rank "
                                + peer
                                + (send ? " to receive" : " to send")
                                + " in "
                                + signature
                                + ")";
            }
            // Rethrow on the waiting thread, keeping the I/O thread's exception as the cause.
            throw new CommunicationException(message, f.getPeerRank(), f);
        } catch (TimeoutException e) {
            throw new CommunicationException(
                    signature
                            + " timed out after "
                            + deadline.timeout()
                            + " waiting for rank "
                            + peer
                            + (send ? " to receive " : " to send ")
                            + bytes
                            + " bytes (did rank "
                            + peer
                            + " die, stall, or skip this collective?)",
                    peer,
                    e);
        }
    }

    /**
     * Waits up to {@code nanos} for the transfer to complete, successfully or not, without
     * throwing.
     *
     * @param nanos the longest wait
     * @return whether it completed
     */
    public boolean awaitQuietly(long nanos) {
        try {
            done.get(nanos, TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (ExecutionException | TimeoutException e) {
            // failed (the caller's await reports it) or not yet complete
        }
        return done.isDone();
    }

    void complete() {
        done.complete(null);
    }

    void fail(CommunicationException cause) {
        done.completeExceptionally(cause);
    }
}
