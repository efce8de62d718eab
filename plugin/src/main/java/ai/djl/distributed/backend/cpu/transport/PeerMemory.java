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
import ai.djl.distributed.store.Store;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Reads and writes the memory of the group's other processes on this host directly, with Linux's
 * cross memory attach ({@code process_vm_readv(2)}, {@code process_vm_writev(2)}): one copy between
 * the peer's buffer and this rank's, where a ring through shared memory takes two (into the ring,
 * out of it). MPI implementations use it for large messages within a host for the same reason.
 *
 * <p>The kernel allows it where this process may ptrace the peer: same user, and no Yama policy or
 * seccomp filter against it. {@link #connect} finds out by reading and writing a probe of every
 * peer, and every rank learns every other's verdict through the store, so that all ranks use it or
 * none does (their algorithms must agree).
 *
 * <p>A read never waits for the peer: the algorithms tell each other, by messages, when a buffer
 * may be read and when it has been. Thread-safe; it holds no socket or thread, and no native memory
 * beyond two 16-byte buffers per thread that calls it (freed with the thread).
 */
public final class PeerMemory {

    private static final boolean LINKED = link();

    private static final SetupRendezvous RENDEZVOUS = SetupRendezvous.CMA;

    private static final int ESRCH = 3;

    /** Two struct iovec {base, length} per thread: the local one, then the remote one. */
    private static final ThreadLocal<ByteBuffer[]> IOVS =
            ThreadLocal.withInitial(
                    () ->
                            new ByteBuffer[] {
                                ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder()),
                                ByteBuffer.allocateDirect(16).order(ByteOrder.nativeOrder())
                            });

    private final int rank;
    private final long[] pids;

    private PeerMemory(int rank, long[] pids) {
        this.rank = rank;
        this.pids = pids;
    }

    /**
     * Checks that every rank of the group can read every other's memory. Every rank must call it.
     * Blocks until every rank has probed every other and said whether it could, or one has given
     * up, for at most {@code timeout} in all. A rank that fails tells the others through the store
     * ({@link SetupRendezvous}: {@code cma/<rank>}, {@code cma/probed}, {@code cma/verdict}), so
     * that a rank waiting for it fails at once, naming it and giving its reason, instead of waiting
     * out {@code timeout}. Safe to call from one thread per rank.
     *
     * @param store the group's store
     * @param rank this rank
     * @param size the number of ranks, all on this host in one pid namespace
     * @param timeout how long to wait for the peers' probes and verdicts
     * @return the peer memory, or null where any rank cannot read any peer's
     * @throws CommunicationException if a rank gives up or does not probe in time, or the store
     *     fails
     */
    public static PeerMemory connect(Store store, int rank, int size, Duration timeout) {
        Deadline deadline = Deadline.after(timeout);
        // The nonce, then a slot each peer writes to.
        ByteBuffer probe = ByteBuffer.allocateDirect(Long.BYTES * (size + 1));
        boolean announced = false;
        try {
            long nonce = ThreadLocalRandom.current().nextLong();
            probe.putLong(0, nonce);
            long pid = ProcessHandle.current().pid();
            RENDEZVOUS.announce(
                    store, rank, pid + ":" + (LINKED ? address(probe) : 0) + ":" + nonce);
            announced = true;
            long[] pids = new long[size];
            boolean ok = LINKED;
            for (int r = 0; r < size; r++) {
                String[] f =
                        (r == rank
                                        ? new String(
                                                store.get(RENDEZVOUS.announcementKey(r)),
                                                StandardCharsets.UTF_8)
                                        : RENDEZVOUS.awaitAnnouncement(store, r, deadline))
                                .split(":");
                pids[r] = Long.parseLong(f[0]);
                ok =
                        ok
                                && Long.parseLong(f[1]) != 0
                                && probes(pids[r], Long.parseLong(f[1]), f[2], rank);
            }
            store.set("cma_ok/" + rank, new byte[] {(byte) (ok ? 1 : 0)});
            // The probe must stay readable until every peer has read it: until every verdict is
            // in. Each rank says its own before it counts itself done.
            RENDEZVOUS.awaitAllDone(store, size, deadline);
            for (int r = 0; r < size; r++) {
                ok &= store.get("cma_ok/" + r)[0] == 1;
            }
            return ok ? new PeerMemory(rank, pids) : null;
        } catch (RuntimeException e) {
            CommunicationException failure =
                    SetupRendezvous.failure(rank, "failed probing its peers' memory", e);
            throw RENDEZVOUS.giveUp(store, rank, announced, failure);
        } finally {
            Reference.reachabilityFence(probe);
        }
    }

    /** Reads a peer's nonce and writes it back into the peer's slot for this rank. */
    private static boolean probes(long pid, long address, String nonce, int rank) {
        ByteBuffer into = ByteBuffer.allocateDirect(Long.BYTES);
        try {
            return transfer(pid, address(into), address, Long.BYTES, false) == Long.BYTES
                    && Long.toString(into.getLong(0)).equals(nonce)
                    && transfer(pid, address(into), address + Long.BYTES * (rank + 1L), 8, true)
                            == Long.BYTES;
        } catch (LastErrorException e) {
            return false; // EPERM where ptrace is not allowed, ENOSYS under some seccomp filters
        }
    }

    /**
     * Returns the native address of a direct buffer's first byte (its position is ignored).
     *
     * @param buffer a direct buffer
     * @return the address, for a peer to {@link #read}
     */
    public static long address(ByteBuffer buffer) {
        if (!buffer.isDirect()) {
            throw new IllegalArgumentException(
                    "buffer: a heap buffer (expected: a direct buffer, which has an address)");
        }
        return Pointer.nativeValue(Native.getDirectBufferPointer(buffer));
    }

    /**
     * Copies {@code into.remaining()} bytes from {@code address} in {@code peer}'s memory into
     * {@code into}, from its position; the position and limit are not changed. The peer must keep
     * that memory unchanged until told the read is done.
     *
     * @param peer the rank whose memory is read
     * @param address the address there, from the peer
     * @param into a direct buffer
     * @throws CommunicationException naming the peer if its memory cannot be read (it is gone)
     */
    public void read(int peer, long address, ByteBuffer into) {
        copy(peer, address, into, false);
    }

    /**
     * Copies {@code from.remaining()} bytes of {@code from}, from its position, to {@code address}
     * in {@code peer}'s memory; the position and limit are not changed. The peer must neither read
     * nor write that memory until told the write is done.
     *
     * @param peer the rank whose memory is written
     * @param address the address there, from the peer
     * @param from a direct buffer
     * @throws CommunicationException naming the peer if its memory cannot be written (it is gone)
     */
    public void write(int peer, long address, ByteBuffer from) {
        copy(peer, address, from, true);
    }

    /**
     * Returns whether {@code peer}'s process still runs: one that has exited and waits to be reaped
     * (a zombie) does not.
     *
     * @param peer the rank
     * @return whether its process is alive
     */
    public boolean isAlive(int peer) {
        return PeerProcess.isRunning(pids[peer]);
    }

    private void copy(int peer, long address, ByteBuffer local, boolean write) {
        long base = address(local) + local.position();
        long want = local.remaining();
        String verb = write ? "write" : "read";
        long done = 0;
        while (done < want) {
            long n;
            try {
                n = transfer(pids[peer], base + done, address + done, want - done, write);
                Reference.reachabilityFence(local);
            } catch (LastErrorException e) {
                String why =
                        e.getErrorCode() == ESRCH
                                ? "its process (pid " + pids[peer] + ") is gone"
                                : "process_vm_" + verb + "v failed, errno " + e.getErrorCode();
                throw new CommunicationException(
                        "rank "
                                + rank
                                + " cannot "
                                + verb
                                + " the memory of rank "
                                + peer
                                + ": "
                                + why,
                        peer);
            }
            if (n <= 0) {
                throw new CommunicationException(
                        String.format(
                                "rank %d could %s %d of %d bytes of rank %d's memory, then nothing"
                                        + " (its buffer is not mapped)",
                                rank, verb, done, want, peer),
                        peer);
            }
            done += n;
        }
    }

    private static long transfer(long pid, long local, long remote, long length, boolean write) {
        ByteBuffer[] iovs = IOVS.get();
        iovs[0].putLong(0, local).putLong(8, length);
        iovs[1].putLong(0, remote).putLong(8, length);
        return write
                ? Libc.process_vm_writev((int) pid, iovs[0], 1, iovs[1], 1, 0)
                : Libc.process_vm_readv((int) pid, iovs[0], 1, iovs[1], 1, 0);
    }

    private static boolean link() {
        if (!Platform.isLinux() || !Platform.is64Bit()) {
            return false;
        }
        try {
            Native.register(Libc.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
            return true;
        } catch (UnsatisfiedLinkError e) {
            return false;
        }
    }

    /**
     * The two libc calls, bound directly (JNA's direct mapping: no reflection per call). Direct
     * mapping binds each method to the libc symbol of the same name, hence the C spelling.
     */
    @SuppressWarnings("checkstyle:MethodName")
    private static final class Libc {

        private Libc() {}

        static native long process_vm_readv(
                int pid,
                ByteBuffer localIov,
                long localCount,
                ByteBuffer remoteIov,
                long remoteCount,
                long flags)
                throws LastErrorException;

        static native long process_vm_writev(
                int pid,
                ByteBuffer localIov,
                long localCount,
                ByteBuffer remoteIov,
                long remoteCount,
                long flags)
                throws LastErrorException;
    }
}
