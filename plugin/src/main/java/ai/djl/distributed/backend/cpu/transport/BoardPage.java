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

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * One rank's page of the {@link ShmBoard}, in shared memory: what it posts and where it stands.
 * Only the page's own rank writes it; every rank reads it.
 *
 * <pre>
 *    0: state: (post &lt;&lt; 3) | phase, see below          256: announce version (odd: changing)
 *   64: slot 0: seq, opcode, dtype, op, root, count, length   264: announced seq and signature
 *  128: slot 1: the same                                      320: closed (0/1)
 *  384: aborted: 0, -1 (claimed), or 1 + the reason's length  448: writing into peers (0/1)
 * 1024: the abort's reason (UTF-8)                           4096: slot 0's data, then slot 1's
 * </pre>
 *
 * <p>The state says where the rank stands in its exchanges: post {@code n} and a phase, {@link
 * #DONE} (exchange n completed), {@link #POSTED} (its data for n is up, the outcome open), {@link
 * #DECIDING} (about to give up on n unless every peer has posted), {@link #FAILED_IN} (it failed n:
 * every rank fails n) or {@link #FAILED_AFTER} (it aborted after n completed, or found every post
 * there when it gave up: n completes everywhere). The page's own rank changes it by
 * compare-and-set, since its collective thread and a thread aborting the group may race.
 */
final class BoardPage {

    /** Exchange n completed on this rank. */
    static final long DONE = 0;

    /** This rank's data for exchange n is posted; it has not decided yet. */
    static final long POSTED = 1;

    /** This rank is giving up on exchange n unless it finds every post there. */
    static final long DECIDING = 2;

    /** This rank failed exchange n: so does every rank. */
    static final long FAILED_IN = 3;

    /** This rank aborted with exchange n complete (n completes on every rank). */
    static final long FAILED_AFTER = 4;

    /** The largest message a slot holds. */
    static final int SLOT_BYTES = HybridTransport.SMALL_BYTES;

    /** Bytes of a page: the header, then the two slots. */
    static final int BYTES = 4096 + 2 * SLOT_BYTES;

    private static final int STATE = 0;
    private static final int SIG = 64;
    private static final int CURRENT_VERSION = 256;
    private static final int CURRENT = 264;
    private static final int CLOSED = 320;
    private static final int ABORTED = 384;
    private static final int WRITING = 448;
    private static final int ABORT_REASON = 1024;
    private static final int MAX_REASON_BYTES = 3072;
    private static final int SLOTS = 4096;
    private static final VarHandle LONG =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final ByteBuffer page;

    BoardPage(MappedByteBuffer mapping) {
        this.page = mapping.duplicate().order(ByteOrder.LITTLE_ENDIAN);
    }

    static long state(long post, long phase) {
        return post << 3 | phase;
    }

    static long postOf(long state) {
        return state >>> 3;
    }

    static long phaseOf(long state) {
        return state & 7;
    }

    /** Whether a state shows the data of exchange {@code post} posted and not failed. */
    static boolean hasPosted(long state, long post) {
        return postOf(state) > post || (postOf(state) == post && phaseOf(state) != FAILED_IN);
    }

    long state() {
        return (long) LONG.getVolatile(page, STATE);
    }

    boolean casState(long expected, long update) {
        return LONG.compareAndSet(page, STATE, expected, update);
    }

    /** Writes a message into a slot; it is published by the state change that follows. */
    void writeSlot(int slot, long seq, OpSignature signature, ByteBuffer data) {
        page.put(SLOTS + slot * SLOT_BYTES, data, data.position(), data.remaining());
        putSignature(SIG + 64 * slot, seq, signature);
        page.putInt(SIG + 64 * slot + 32, data.remaining());
    }

    long slotSeq(int slot) {
        return page.getLong(SIG + 64 * slot);
    }

    OpSignature slotSignature(int slot) {
        return getSignature(SIG + 64 * slot);
    }

    /** A read-only view of a slot's message, valid until the rank posts into that slot again. */
    ByteBuffer slotData(int slot) {
        return page.slice(SLOTS + slot * SLOT_BYTES, page.getInt(SIG + 64 * slot + 32))
                .asReadOnlyBuffer()
                .order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Publishes the collective this rank now runs (a seqlock: readers retry while it changes). */
    void announce(long seq, OpSignature signature) {
        long version = (long) LONG.getOpaque(page, CURRENT_VERSION);
        LONG.setOpaque(page, CURRENT_VERSION, version + 1);
        VarHandle.storeStoreFence();
        putSignature(CURRENT, seq, signature);
        LONG.setRelease(page, CURRENT_VERSION, version + 2);
    }

    /** The announced collective, or null when none is, or it is changing. */
    Announced announced() {
        long version = (long) LONG.getAcquire(page, CURRENT_VERSION);
        if (version == 0 || (version & 1) != 0) {
            return null;
        }
        long seq = page.getLong(CURRENT);
        OpSignature signature = getSignature(CURRENT);
        VarHandle.acquireFence();
        return (long) LONG.getOpaque(page, CURRENT_VERSION) == version
                ? new Announced(seq, signature)
                : null;
    }

    /** A collective a rank announced. */
    record Announced(long seq, OpSignature signature) {}

    /**
     * Sets the abort mark with its reason, once; returns whether this call set it. Threads of the
     * page's rank may race here: the first claims the mark (-1) before it writes the reason, so no
     * other writes over it, and publishes the length last.
     */
    boolean markAborted(String reason) {
        if (!LONG.compareAndSet(page, ABORTED, 0L, -1L)) {
            return false;
        }
        byte[] bytes = reason.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(bytes.length, MAX_REASON_BYTES);
        page.put(ABORT_REASON, bytes, 0, n);
        LONG.setVolatile(page, ABORTED, 1L + n);
        return true;
    }

    boolean isAborted() {
        return (long) LONG.getVolatile(page, ABORTED) != 0;
    }

    /** The abort's reason, or "" before the mark is set (waits briefly while it is written). */
    String reason() {
        long mark = (long) LONG.getVolatile(page, ABORTED);
        for (int spins = 0; mark == -1 && spins < 100_000; spins++) {
            Thread.onSpinWait(); // claimed, the reason being written: a few microseconds
            mark = (long) LONG.getVolatile(page, ABORTED);
        }
        if (mark == 0) {
            return "";
        }
        if (mark == -1) {
            return "(its reason is still being written)";
        }
        byte[] reason = new byte[(int) Math.min(mark - 1, MAX_REASON_BYTES)];
        page.get(ABORT_REASON, reason);
        return new String(reason, StandardCharsets.UTF_8);
    }

    void markClosed() {
        LONG.setRelease(page, CLOSED, 1L);
    }

    boolean isClosed() {
        return (long) LONG.getVolatile(page, CLOSED) != 0;
    }

    void setWriting(boolean writing) {
        if (writing) {
            LONG.setVolatile(page, WRITING, 1L);
        } else {
            LONG.setRelease(page, WRITING, 0L);
        }
    }

    boolean isWriting() {
        return (long) LONG.getVolatile(page, WRITING) != 0;
    }

    private void putSignature(int at, long seq, OpSignature signature) {
        page.putLong(at, seq)
                .putInt(at + 8, signature.opcode())
                .putInt(at + 12, signature.dtype())
                .putInt(at + 16, signature.reduceOp())
                .putInt(at + 20, signature.root())
                .putLong(at + 24, signature.count());
    }

    private OpSignature getSignature(int at) {
        return new OpSignature(
                page.getInt(at + 8),
                page.getInt(at + 12),
                page.getInt(at + 16),
                page.getInt(at + 20),
                page.getLong(at + 24));
    }
}
