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

import com.sun.jna.LastErrorException;
import com.sun.jna.Library;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * Shared memory with no name in any file system: each segment is a {@code memfd_create(2)} file,
 * which a peer process of the same user opens through {@code /proc/<pid>/fd/<fd>} while its creator
 * holds the descriptor. Nothing is ever written to {@code /dev/shm}, so no failure, restart or kill
 * can leave a file behind: the memory goes when the last mapping does.
 *
 * <p>A peer's segment is only ever opened, never created: one that is missing (its creator exited
 * or gave up), is not the segment expected (the descriptor now names another file) or has the wrong
 * size fails at once with a {@link CommunicationException} naming the peer, the path and what was
 * expected.
 *
 * <p>A mapping is let go of by {@link #release}, as soon as its owner is done with it, rather than
 * when the garbage collector frees its buffer: a group's rings are megabytes, and a process that
 * creates and destroys groups would otherwise hold every closed group's memory until a collection
 * that nothing prompts (the buffers are small objects on the heap).
 *
 * <p>Thread-safe; the class holds nothing.
 */
final class ShmSegments {

    private static final Logger logger = LoggerFactory.getLogger(ShmSegments.class);

    private static final boolean LINKED = link();
    private static final VariadicLibc VARIADIC =
            LINKED ? Native.load(Platform.C_LIBRARY_NAME, VariadicLibc.class) : null;
    private static final int MFD_CLOEXEC = 1;
    private static final int O_RDWR = 2;
    private static final int O_CLOEXEC = 0x80000;
    private static final int PROT_READ = 1;
    private static final int PROT_WRITE = 2;
    private static final int MAP_PRIVATE = 2;
    private static final int MAP_FIXED = 0x10;
    private static final int MAP_ANONYMOUS = 0x20; // but 0x800 on MIPS, where release is skipped
    // mmap(2) is bound with 64-bit size_t and off_t, and the flags above are the common ones.
    private static final boolean CAN_RELEASE = LINKED && Platform.is64Bit() && !Platform.isMIPS();

    private ShmSegments() {}

    /**
     * Whether this process can create segments: Linux with {@code memfd_create} and {@code /proc}.
     *
     * @return whether segments are available
     */
    static boolean isAvailable() {
        return LINKED && Files.isDirectory(Path.of("/proc/self/fd"));
    }

    /** A segment this process created: its descriptor, until the peers have mapped it. */
    static final class Segment implements AutoCloseable {

        private final String name;
        private final MappedByteBuffer buffer;
        private int fd;

        private Segment(String name, int fd, MappedByteBuffer buffer) {
            this.name = name;
            this.fd = fd;
            this.buffer = buffer;
        }

        /** The name it shows as ({@code memfd:NAME}), for the peers to check. */
        String name() {
            return name;
        }

        /** Its descriptor in this process, for the peers to open; -1 once closed. */
        synchronized int fd() {
            return fd;
        }

        /** This process's mapping; it outlives {@link #close()}. */
        MappedByteBuffer buffer() {
            return buffer;
        }

        /** Closes the descriptor, so that no peer can open the segment any more; idempotent. */
        @Override
        public synchronized void close() {
            if (fd >= 0) {
                closeQuietly(fd);
                fd = -1;
            }
        }
    }

    /**
     * Creates a segment of zeros and maps it.
     *
     * @param name its name, unique to the group (a random token in it)
     * @param bytes its size
     * @return the segment, whose descriptor the caller closes once the peers have mapped it
     * @throws IOException if it cannot be created or mapped
     */
    static Segment create(String name, int bytes) throws IOException {
        if (!LINKED) {
            throw new IOException("memfd_create(2) is not available on this system");
        }
        int fd;
        try {
            fd = Libc.memfd_create(name, MFD_CLOEXEC);
        } catch (LastErrorException e) {
            throw new IOException("memfd_create(" + name + ") failed: " + describe(e));
        }
        try (FileChannel ch =
                FileChannel.open(self(fd), StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            // A new memfd is empty: growing it gives zeros (the rings' cursors start at 0).
            ch.write(java.nio.ByteBuffer.allocate(1), bytes - 1L);
            return new Segment(name, fd, ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes));
        } catch (IOException | RuntimeException e) {
            closeQuietly(fd);
            throw e;
        }
    }

    /**
     * Maps a peer's segment: opens {@code /proc/<pid>/fd/<fd>}, checks that it is the memfd named
     * {@code name} and {@code bytes} long, and maps it.
     *
     * @param peer the rank that created it, for messages
     * @param pid its process
     * @param fd its descriptor there
     * @param name the name it must have
     * @param bytes the size it must have
     * @return the mapping
     * @throws CommunicationException naming the peer, the path and what was expected, if the
     *     segment is missing, is another file, has another size, or cannot be opened
     */
    static MappedByteBuffer open(int peer, long pid, int fd, String name, int bytes) {
        Path path = Path.of("/proc", Long.toString(pid), "fd", Integer.toString(fd));
        String expected =
                bytes
                        + " bytes of shared memory memfd:"
                        + name
                        + " created by rank "
                        + peer
                        + " (pid "
                        + pid
                        + ")";
        int mine;
        try {
            mine = VARIADIC.open(path.toString(), O_RDWR | O_CLOEXEC);
        } catch (LastErrorException e) {
            String why =
                    e.getErrorCode() == 2
                            ? "is missing (its process exited, or gave up)"
                            : "cannot be opened ("
                                    + describe(e)
                                    + "; the ranks must run as one user, in one pid namespace)";
            throw failure(peer, path, why, expected);
        }
        try {
            // Checked on the descriptor now open here: the peer's number may have been reused.
            Path opened = self(mine);
            String link = Files.readSymbolicLink(opened).toString();
            if (!link.equals("/memfd:" + name + " (deleted)")) {
                throw failure(peer, path, "is '" + link + "'", expected);
            }
            try (FileChannel ch =
                    FileChannel.open(opened, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                if (ch.size() != bytes) {
                    throw failure(peer, path, "is " + ch.size() + " bytes long", expected);
                }
                return ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
            }
        } catch (IOException e) {
            throw failure(peer, path, "cannot be mapped (" + e + ")", expected);
        } finally {
            closeQuietly(mine);
        }
    }

    /**
     * Lets go of this process's mapping of a segment now: the memory behind it is freed once no
     * process maps it (the descriptors are closed at set-up). The buffer's pages become private
     * zeros, which the buffer still reads and writes harmlessly; its contents are lost. Where this
     * cannot be done (not Linux on a 64-bit platform with the common {@code mmap} flags, or {@code
     * mmap} fails) the mapping stays until the buffer is collected, as before.
     *
     * <p>The pages are replaced ({@code mmap(MAP_FIXED)} of anonymous memory over them) rather than
     * unmapped. Unmapping, whether by {@code munmap(2)} on the buffer's address or by the JDK's
     * cleaner ({@code Unsafe.invokeCleaner}), would leave a buffer that crashes the JVM on its next
     * access, and the board's pages are reachable from any thread that aborts the group, even after
     * the group is closed; and a {@code munmap} behind the JDK's back would be repeated by the
     * buffer's cleaner later, over whatever the range holds by then. Replaced, the range stays this
     * buffer's until its cleaner unmaps it: only address space, no memory, is held until then.
     *
     * @param mapping a buffer returned by {@link #create} or {@link #open} (not a slice of one)
     */
    static void release(MappedByteBuffer mapping) {
        if (!CAN_RELEASE || mapping == null) {
            return;
        }
        Pointer base = Native.getDirectBufferPointer(mapping);
        try {
            Libc.mmap(
                    base,
                    mapping.capacity(),
                    PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
                    -1,
                    0);
        } catch (LastErrorException e) {
            // ENOMEM under strict overcommit, say: the mapping is freed with its buffer instead.
            logger.debug(
                    "releasing {} bytes of shared memory failed: {}",
                    mapping.capacity(),
                    describe(e));
        }
    }

    private static CommunicationException failure(
            int peer, Path path, String what, String expected) {
        return new CommunicationException(
                "rank "
                        + peer
                        + "'s shared memory "
                        + path
                        + " "
                        + what
                        + " (expected: "
                        + expected
                        + ")",
                peer);
    }

    private static Path self(int fd) {
        return Path.of("/proc/self/fd/" + fd);
    }

    private static void closeQuietly(int fd) {
        try {
            Libc.close(fd);
        } catch (LastErrorException e) {
            // EBADF or EINTR: either way the descriptor is gone (Linux closes it before EINTR)
        }
    }

    private static boolean link() {
        if (!Platform.isLinux()) {
            return false;
        }
        try {
            Native.register(Libc.class, NativeLibrary.getInstance(Platform.C_LIBRARY_NAME));
            return true;
        } catch (LinkageError e) {
            // No memfd_create in a libc older than glibc 2.27, or JNA itself did not load: either
            // way no segments, and the auto transport falls back to TCP.
            return false;
        }
    }

    /** An errno as libc words it, e.g. "errno 24, Too many open files". */
    private static String describe(LastErrorException e) {
        try {
            return "errno " + e.getErrorCode() + ", " + VARIADIC.strerror(e.getErrorCode());
        } catch (LinkageError | RuntimeException unavailable) {
            return "errno " + e.getErrorCode();
        }
    }

    /**
     * The variadic {@code open(2)} and {@code strerror(3)}, bound through an interface: JNA's
     * direct mapping cannot call a variadic function by its calling convention.
     */
    private interface VariadicLibc extends Library {
        int open(String path, int flags, Object... mode) throws LastErrorException;

        String strerror(int errnum);
    }

    /**
     * The libc calls, bound directly (JNA's direct mapping: no reflection per call). Direct mapping
     * binds each method to the libc symbol of the same name, hence the C spelling.
     */
    @SuppressWarnings("checkstyle:MethodName")
    private static final class Libc {

        private Libc() {}

        static native int memfd_create(String name, int flags) throws LastErrorException;

        static native int close(int fd) throws LastErrorException;

        static native Pointer mmap(
                Pointer addr, long length, int prot, int flags, int fd, long offset)
                throws LastErrorException;
    }
}
