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
package ai.djl.distributed.store;

import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.Platform;
import com.sun.jna.Pointer;

import java.io.IOException;
import java.nio.charset.Charset;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.locks.LockSupport;

/**
 * A file opened through libc, as PyTorch's {@code FileStore} opens it, so that its {@code flock(2)}
 * locks exclude those of Python ranks. Java's {@code FileChannel.lock} takes fcntl record locks,
 * which on Linux do not exclude {@code flock} locks, hence the native calls (JNA, no JNI code).
 *
 * <p>One instance is one descriptor, used by one thread for one store operation; it is not
 * thread-safe. Failures throw {@link StoreException} naming the owner, the call, the path and the
 * system's error text.
 */
final class PosixFile implements AutoCloseable {

    /** The libc calls used; {@code off_t}, {@code size_t} and {@code ssize_t} are 64-bit. */
    interface LibC extends Library {
        /** open(2); {@code mode} is the variadic creation mode. */
        int open(byte[] path, int flags, Object... mode);

        /** close(2). */
        int close(int fd);

        /** flock(2). */
        int flock(int fd, int operation);

        /** lseek(2). */
        long lseek(int fd, long offset, int whence);

        /** pread(2). */
        long pread(int fd, Pointer buf, long count, long offset);

        /** pwrite(2). */
        long pwrite(int fd, Pointer buf, long count, long offset);

        /** ftruncate(2). */
        int ftruncate(int fd, long length);

        /** strerror(3). */
        String strerror(int errnum);
    }

    private static final int LOCK_SH = 1;
    private static final int LOCK_EX = 2;
    private static final int LOCK_NB = 4;
    private static final int LOCK_UN = 8;
    private static final int SEEK_END = 2;
    private static final int EINTR = 4;
    private static final int ENOENT = 2;
    private static final int O_RDONLY = 0;
    private static final int O_RDWR = 2;
    private static final int O_CREAT = Platform.isMac() ? 0x200 : 0100;
    private static final int O_CLOEXEC = Platform.isMac() ? 0x1000000 : 02000000;
    private static final int EWOULDBLOCK = Platform.isMac() ? 35 : 11;
    private static final int MODE = 0644;

    /** The largest native buffer one read or write goes through. */
    private static final int CHUNK = 1 << 20;

    /** The first and the longest pause between tries for a lock another descriptor holds. */
    private static final long MIN_BACKOFF_NANOS = 20_000;

    private static final long MAX_BACKOFF_NANOS = 2_000_000;

    private static final LibC LIBC = load();

    /** How the JDK encodes file names, so that its own file calls see the same files. */
    private static final Charset FILE_NAMES = fileNameCharset();

    private final String owner;
    private final Path path;
    private int fd;

    private PosixFile(String owner, Path path, int fd) {
        this.owner = owner;
        this.path = path;
        this.fd = fd;
    }

    private static LibC load() {
        // Elsewhere the constants above would be wrong; PyTorch uses LockFileEx on Windows.
        if (!(Platform.isLinux() || Platform.isMac()) || !Platform.is64Bit()) {
            return null;
        }
        return Native.load(Platform.C_LIBRARY_NAME, LibC.class);
    }

    private static Charset fileNameCharset() {
        String encoding = System.getProperty("sun.jnu.encoding");
        return encoding != null && Charset.isSupported(encoding)
                ? Charset.forName(encoding)
                : Charset.defaultCharset();
    }

    /**
     * Opens a file, as PyTorch does with mode 0644 when creating it.
     *
     * @param owner the store, named in error messages
     * @param path the file
     * @param write whether to open it for writing, else read-only
     * @param create whether to create it if missing
     * @return the open file, or {@code null} if it (or, when creating, its directory) is missing
     * @throws StoreException if it cannot be opened for another reason
     */
    static PosixFile open(String owner, Path path, boolean write, boolean create) {
        if (LIBC == null) {
            throw new StoreException(
                    owner
                            + ": flock(2) file stores need 64-bit Linux or macOS, not "
                            + Platform.ARCH
                            + " "
                            + System.getProperty("os.name"));
        }
        byte[] name = (path.toString() + '\0').getBytes(FILE_NAMES);
        int flags = (write ? O_RDWR : O_RDONLY) | (create ? O_CREAT : 0) | O_CLOEXEC;
        while (true) {
            int fd = LIBC.open(name, flags, MODE);
            if (fd >= 0) {
                return new PosixFile(owner, path, fd);
            }
            int errno = Native.getLastError();
            if (errno == ENOENT) {
                return null;
            }
            if (errno != EINTR) {
                throw failure(owner, path, "open", errno);
            }
        }
    }

    /**
     * Takes a whole-file {@code flock(2)} lock, polling until the deadline rather than blocking in
     * the kernel, so that a process that holds the lock forever cannot hang the caller.
     *
     * @param exclusive {@code LOCK_EX} if true, else {@code LOCK_SH}
     * @param deadline the deadline, in {@link System#nanoTime()} terms
     * @return {@code true} once locked, {@code false} if the deadline passed first
     * @throws StoreException if the call fails or the thread is interrupted
     */
    boolean lock(boolean exclusive, long deadline) {
        int operation = (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB;
        long backoff = MIN_BACKOFF_NANOS;
        while (LIBC.flock(fd, operation) != 0) {
            int errno = Native.getLastError();
            if (errno == EINTR) {
                continue;
            }
            if (errno != EWOULDBLOCK) {
                throw failure("flock", errno);
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            if (Thread.currentThread().isInterrupted()) {
                throw new StoreException(owner + ": interrupted while waiting to lock " + path);
            }
            LockSupport.parkNanos(Math.min(backoff, left));
            backoff = Math.min(backoff * 2, MAX_BACKOFF_NANOS);
        }
        return true;
    }

    /**
     * Returns the file's size.
     *
     * @return the size in bytes
     */
    long size() {
        long size = LIBC.lseek(fd, 0, SEEK_END);
        if (size < 0) {
            throw failure("lseek", Native.getLastError());
        }
        return size;
    }

    /**
     * Returns what identifies the open file on its file system (its device and inode), through
     * {@code /dev/fd}, which Linux and macOS both have, so it names this descriptor's file even if
     * the path now names another or none.
     *
     * @return an object equal to another such identity exactly when both name the same file, or
     *     {@code null} if it cannot be had here
     */
    Object identity() {
        try {
            return Files.readAttributes(Path.of("/dev/fd/" + fd), BasicFileAttributes.class)
                    .fileKey();
        } catch (IOException | UnsupportedOperationException e) {
            return null;
        }
    }

    /**
     * Reads exactly {@code length} bytes at a position.
     *
     * @param position where to read in the file
     * @param dst where to put the bytes
     * @param offset where in {@code dst}
     * @param length how many bytes
     * @throws StoreException if the call fails or the file ends first
     */
    void read(long position, byte[] dst, int offset, int length) {
        try (Memory buffer = new Memory(Math.max(1, Math.min(length, CHUNK)))) {
            int done = 0;
            while (done < length) {
                long want = Math.min(length - done, buffer.size());
                long n = LIBC.pread(fd, buffer, want, position + done);
                if (n < 0) {
                    int errno = Native.getLastError();
                    if (errno == EINTR) {
                        continue;
                    }
                    throw failure("pread", errno);
                }
                if (n == 0) {
                    throw new StoreException(
                            owner
                                    + ": "
                                    + path
                                    + " ended at "
                                    + (position + done)
                                    + " bytes while "
                                    + (length - done)
                                    + " more were expected");
                }
                buffer.read(0, dst, offset + done, (int) n);
                done += (int) n;
            }
        }
    }

    /**
     * Writes all of {@code src} at a position.
     *
     * @param position where to write in the file
     * @param src the bytes
     * @throws StoreException if the call fails
     */
    void write(long position, byte[] src) {
        try (Memory buffer = new Memory(Math.max(1, Math.min(src.length, CHUNK)))) {
            int done = 0;
            while (done < src.length) {
                int chunk = (int) Math.min(src.length - done, buffer.size());
                buffer.write(0, src, done, chunk);
                int written = 0;
                while (written < chunk) {
                    long n =
                            LIBC.pwrite(
                                    fd,
                                    buffer.share(written),
                                    chunk - written,
                                    position + done + written);
                    if (n < 0) {
                        int errno = Native.getLastError();
                        if (errno == EINTR) {
                            continue;
                        }
                        throw failure("pwrite", errno);
                    }
                    if (n == 0) {
                        throw new StoreException(owner + ": pwrite(" + path + ") wrote nothing");
                    }
                    written += (int) n;
                }
                done += chunk;
            }
        }
    }

    /**
     * Cuts the file to a size, to take back a record that was only partly written.
     *
     * @param size the new size
     */
    void truncate(long size) {
        while (LIBC.ftruncate(fd, size) != 0) {
            int errno = Native.getLastError();
            if (errno != EINTR) {
                throw failure("ftruncate", errno);
            }
        }
    }

    /** Unlocks and closes the file, as PyTorch does after each operation; idempotent. */
    @Override
    public void close() {
        if (fd < 0) {
            return;
        }
        int closing = fd;
        fd = -1;
        // Closing the only descriptor releases the lock too; unlock first as PyTorch does.
        LIBC.flock(closing, LOCK_UN);
        // No retry on EINTR: Linux has released the descriptor already.
        if (LIBC.close(closing) != 0) {
            int errno = Native.getLastError();
            if (errno != EINTR) {
                throw failure("close", errno);
            }
        }
    }

    private StoreException failure(String call, int errno) {
        return failure(owner, path, call, errno);
    }

    private static StoreException failure(String owner, Path path, String call, int errno) {
        return new StoreException(
                owner
                        + ": "
                        + call
                        + "("
                        + path
                        + ") failed: "
                        + LIBC.strerror(errno)
                        + " (errno "
                        + errno
                        + ")");
    }
}
