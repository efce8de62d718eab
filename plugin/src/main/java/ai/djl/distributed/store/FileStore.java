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

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * A store in a file that every rank can reach, such as one on a shared filesystem: PyTorch's {@code
 * FileStore}, with its on-disk format and locking, so Java and Python ranks can meet in one file.
 *
 * <p><b>Format.</b> The file is exactly the given path: an append-only log of {@code key, value}
 * records, never compacted. A user key {@code k} is stored as {@code "/k"}; deleting it appends a
 * tombstone {@code "-/k"}. The counters {@code "refcount/"} and {@code "cleanup/"} track the
 * instances, and {@link #numKeys()} counts them, as PyTorch's does.
 *
 * <p><b>Locking.</b> Each call opens the file, takes a {@code flock(2)} lock on it (exclusive to
 * write, shared to read), replays the records appended since this instance last looked, does its
 * work, unlocks and closes. Threads of one instance are serialised by a lock of its own. Waiting
 * for either lock is bounded by the store timeout.
 *
 * <p><b>Blocking.</b> {@link #get} and {@link #waitFor} poll every 10 ms until their keys exist,
 * also while the file itself does not exist yet. The other calls wait only for the locks, and,
 * except those that create the file, for the file to appear. The constructor waits for the
 * exclusive lock, within the timeout it is given (else the default 300 s), and for no other rank.
 *
 * <p><b>Lifecycle.</b> The constructor adds 1 to {@code refcount/}. {@link #close()} adds 1 to
 * {@code cleanup/} and -1 to {@code refcount/}, in one write; when no instance is left and at least
 * {@code numWorkers} have closed, it deletes the file. A store used after {@code close()} throws
 * {@link IllegalStateException}.
 *
 * <p><b>Observers.</b> A store opened by {@link #observe} is no participant: it never touches
 * {@code refcount/} or {@code cleanup/}, and never deletes the file, so a tool that looks at a
 * running job's file cannot make the job's last worker delete it early. It does not create the file
 * to read it: its reads wait for a missing file as they would for a missing key. Its writes ({@code
 * set}, {@code add}, {@code compareSet}, {@code append}) create the file, as any writer's.
 *
 * <p>Thread-safe: threads of one instance take turns under its lock.
 *
 * <p>As PyTorch's, {@link #deleteKey} always returns {@code true}, a counter holding an empty value
 * counts as 0, {@link #multiGet} and {@link #multiSet} are the {@link Store} fallbacks, {@link
 * #hasExtendedApi()} is {@code false}, and there are no queues. {@link #append} writes what
 * PyTorch's compareSet-based fallback writes, but as one locked update.
 */
public final class FileStore implements Store {

    private static final String USER_PREFIX = "/";
    private static final String REFCOUNT_KEY = "refcount/";
    private static final String CLEANUP_KEY = "cleanup/";
    private static final long POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Path path;
    private final int numWorkers;
    private final boolean observer; // holds no reference: see observe()
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Duration timeout;

    // Guarded by lock: the replayed records, the offset replayed up to, the file they came from
    // (its device and inode, once known, and a descriptor held open on it so that its inode
    // number is not reused by a new file at the path while this store lives), and the lifecycle.
    private final Map<String, byte[]> cache = new HashMap<>();
    private long offset;
    private Object identity;
    private PosixFile held;
    private boolean closed;

    /**
     * Opens a store on a file, creating the file if it is missing, that is never deleted.
     *
     * @param path the file; its directory must exist
     * @throws StoreException if the file cannot be created, locked or read
     */
    public FileStore(Path path) {
        this(path, -1);
    }

    /**
     * Opens a store on a file, creating the file if it is missing.
     *
     * @param path the file; its directory must exist
     * @param numWorkers how many instances must have closed before the last one deletes the file,
     *     or -1 to never delete it (PyTorch's {@code world_size})
     * @throws IllegalArgumentException if the path is null or {@code numWorkers} is neither -1 nor
     *     positive
     * @throws StoreException if the file cannot be created, locked or read
     */
    public FileStore(Path path, int numWorkers) {
        this(path, numWorkers, DEFAULT_TIMEOUT);
    }

    /**
     * Opens a store on a file, creating the file if it is missing, with a timeout that bounds the
     * opening too: waiting for another process's lock to add to {@code refcount/}.
     *
     * @param path the file; its directory must exist
     * @param numWorkers how many instances must have closed before the last one deletes the file,
     *     or -1 to never delete it (PyTorch's {@code world_size})
     * @param timeout the store's timeout, as {@link #setTimeout} sets it
     * @throws IllegalArgumentException if the path or timeout is null, the timeout is not positive,
     *     or {@code numWorkers} is neither -1 nor positive
     * @throws StoreException if the file cannot be created, locked or read within the timeout
     */
    public FileStore(Path path, int numWorkers, Duration timeout) {
        this(path, numWorkers, timeout, false);
        try {
            locked(true, file -> addLocked(file, REFCOUNT_KEY, REFCOUNT_KEY, 1));
        } catch (RuntimeException e) {
            lock.lock(); // no other thread has this instance: uncontended
            try {
                releaseHeld(); // the descriptor the replay may have opened
            } finally {
                lock.unlock();
            }
            throw e;
        }
    }

    private FileStore(Path path, int numWorkers, Duration timeout, boolean observer) {
        if (path == null) {
            throw new IllegalArgumentException("path: null (expected: a file path)");
        }
        if (numWorkers != -1 && numWorkers < 1) {
            throw new IllegalArgumentException(
                    "numWorkers: " + numWorkers + " (expected: -1 or a positive count)");
        }
        this.path = path;
        this.numWorkers = numWorkers;
        this.timeout = Stores.checkTimeout(timeout);
        this.observer = observer;
    }

    /**
     * Opens a store on a file as an observer, not a participant: for tools that read or write the
     * file of a job without being one of its workers. It never adds to {@code refcount/} or {@code
     * cleanup/} and never deletes the file, so the job's workers count only themselves. Opening it
     * touches no file, so it does not block. As a participant's, its {@code get}, {@code waitFor},
     * {@code check}, {@code numKeys} and {@code deleteKey} wait for a missing file until their
     * timeout and never create it, and its {@code set}, {@code add}, {@code compareSet} and {@code
     * append} create it.
     *
     * @param path the file
     * @param timeout the store's timeout, as {@link #setTimeout} sets it
     * @return the store; closing it only marks it closed
     * @throws IllegalArgumentException if the path or timeout is null or the timeout not positive
     */
    public static FileStore observe(Path path, Duration timeout) {
        return new FileStore(path, -1, timeout, true);
    }

    /**
     * Returns the file.
     *
     * @return the path the store was opened on
     */
    public Path getPath() {
        return path;
    }

    /** {@inheritDoc} */
    @Override
    public void set(String key, byte[] value) {
        String fileKey = USER_PREFIX + Stores.checkKey(key);
        byte[] copy = Stores.checkValue("value", value).clone();
        locked(true, file -> appendLocked(file, fileKey, copy));
    }

    /** {@inheritDoc} */
    @Override
    public byte[] get(String key) {
        String fileKey = USER_PREFIX + Stores.checkKey(key);
        return poll(
                List.of(key),
                timeout,
                () -> {
                    byte[] value = cache.get(fileKey);
                    return value == null ? null : value.clone();
                });
    }

    /** {@inheritDoc} */
    @Override
    public long add(String key, long delta) {
        String fileKey = USER_PREFIX + Stores.checkKey(key);
        return locked(true, file -> addLocked(file, fileKey, key, delta));
    }

    /** {@inheritDoc} */
    @Override
    public byte[] compareSet(String key, byte[] expected, byte[] desired) {
        String fileKey = USER_PREFIX + Stores.checkKey(key);
        byte[] expectedCopy = Stores.checkValue("expected", expected).clone();
        byte[] desiredCopy = Stores.checkValue("desired", desired).clone();
        return locked(
                true,
                file -> {
                    byte[] current = cache.get(fileKey);
                    boolean matches =
                            current == null
                                    ? expectedCopy.length == 0
                                    : Arrays.equals(current, expectedCopy);
                    if (!matches) {
                        return current == null ? expectedCopy : current.clone();
                    }
                    // As PyTorch's, a match is written even when it changes nothing.
                    appendLocked(file, fileKey, desiredCopy);
                    return desiredCopy.clone();
                });
    }

    /**
     * {@inheritDoc}
     *
     * <p>Done under the file's exclusive lock, writing the record a successful {@code compareSet}
     * of PyTorch's fallback would write, so Python ranks appending through that fallback stay
     * atomic with it. The {@link Store} fallback is not used: it cannot tell its own append from
     * another appender's of the same bytes, and loses one of them.
     */
    @Override
    public void append(String key, byte[] value) {
        String fileKey = USER_PREFIX + Stores.checkKey(key);
        byte[] copy = Stores.checkValue("value", value).clone();
        locked(
                true,
                file -> {
                    byte[] current = cache.get(fileKey);
                    return appendLocked(
                            file, fileKey, current == null ? copy : Stores.concat(current, copy));
                });
    }

    /** {@inheritDoc} */
    @Override
    public boolean deleteKey(String key) {
        String tombstone = FileStoreLog.DELETE_PREFIX + USER_PREFIX + Stores.checkKey(key);
        // PyTorch does not look whether the key existed, and always says it did.
        return locked(true, false, file -> appendLocked(file, tombstone, new byte[0]));
    }

    /** {@inheritDoc} */
    @Override
    public boolean check(List<String> keys) {
        List<String> fileKeys = toFileKeys(keys);
        return locked(false, false, file -> allPresentLocked(fileKeys));
    }

    /** {@inheritDoc} */
    @Override
    public void waitFor(List<String> keys, Duration timeout) {
        List<String> fileKeys = toFileKeys(keys);
        Stores.checkTimeout(timeout);
        // The probe answers null for "not yet", so present keys answer with something non-null.
        poll(keys, timeout, () -> allPresentLocked(fileKeys) ? fileKeys : null);
    }

    /** {@inheritDoc} */
    @Override
    public long numKeys() {
        return locked(false, false, file -> (long) cache.size());
    }

    /** {@inheritDoc} */
    @Override
    public Duration getTimeout() {
        return timeout;
    }

    /** {@inheritDoc} */
    @Override
    public void setTimeout(Duration timeout) {
        this.timeout = Stores.checkTimeout(timeout);
    }

    /**
     * Gives up this instance's reference to the file, and deletes the file if it was the last of at
     * least {@code numWorkers}; does nothing if the file is gone, was replaced (deleted and created
     * again) since this store last read it, or the store is already closed. If the file cannot be
     * locked, read or updated in time, the store stays open, neither counter has changed, and the
     * call may be repeated. An observer ({@link #observe}) only marks itself closed.
     *
     * @throws StoreException if the file cannot be locked, updated or deleted
     */
    @Override
    public void close() {
        Duration timeout = this.timeout;
        long deadline = Stores.deadline(timeout);
        acquire(deadline, timeout);
        try {
            if (closed) {
                return;
            }
            if (observer) {
                markClosed(); // it holds no reference to give up
                return;
            }
            // Without O_CREAT: if someone removed the file there is no reference left to give up.
            try (PosixFile file = PosixFile.open(toString(), path, true, false)) {
                if (file == null) {
                    markClosed();
                    return;
                }
                // Closed only once the reference is given up: a close that could not lock or read
                // the file leaves the store open, and a later close gives the reference up.
                lockFile(file, true, deadline, timeout);
                if (replacedLocked(file)) {
                    markClosed(); // the reference was in the old file, gone with it
                    return;
                }
                replayLocked(file);
                // Both counters in one write, computed before it: a close that fails (a counter
                // that is no number, a write that fails and is taken back) leaves both as they
                // were, so a retry cannot count this instance among the finished twice and let
                // the file be deleted before numWorkers instances have really closed.
                long finished = counterAfterLocked(CLEANUP_KEY, CLEANUP_KEY, 1);
                long references = counterAfterLocked(REFCOUNT_KEY, REFCOUNT_KEY, -1);
                byte[] finishedValue = Stores.formatCounter(finished);
                byte[] referencesValue = Stores.formatCounter(references);
                writeLocked(
                        file,
                        Stores.concat(
                                FileStoreLog.encode(CLEANUP_KEY, finishedValue),
                                FileStoreLog.encode(REFCOUNT_KEY, referencesValue)));
                FileStoreLog.apply(cache, CLEANUP_KEY, finishedValue);
                FileStoreLog.apply(cache, REFCOUNT_KEY, referencesValue);
                markClosed();
                if (references == 0 && numWorkers >= 0 && finished >= numWorkers) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException e) {
                throw new StoreException(this + ": cannot delete " + path + ": " + e, e);
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "FileStore(" + path + ")";
    }

    private List<String> toFileKeys(List<String> keys) {
        Stores.checkKeys(keys);
        String[] fileKeys = new String[keys.size()];
        for (int i = 0; i < fileKeys.length; ++i) {
            fileKeys[i] = USER_PREFIX + keys.get(i);
        }
        return List.of(fileKeys);
    }

    private boolean allPresentLocked(List<String> fileKeys) {
        for (String fileKey : fileKeys) {
            if (!cache.containsKey(fileKey)) {
                return false;
            }
        }
        return true;
    }

    /** Runs a writer's work under both locks; writers create the file, as PyTorch's do. */
    private <T> T locked(boolean exclusive, Function<PosixFile, T> work) {
        return locked(exclusive, exclusive, work);
    }

    /** Runs work under both locks, after replaying; fails if they are not had in time. */
    private <T> T locked(boolean exclusive, boolean create, Function<PosixFile, T> work) {
        Duration timeout = this.timeout;
        long deadline = Stores.deadline(timeout);
        acquire(deadline, timeout);
        try {
            checkOpen();
            try (PosixFile file = openWithin(exclusive, create, deadline, timeout)) {
                lockFile(file, exclusive, deadline, timeout);
                replayLocked(file);
                return work.apply(file);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Polls until a probe of the replayed records gives an answer, every 10 ms as PyTorch does;
     * waits also while the file does not exist, since another rank may not have created it yet.
     */
    private <T> T poll(List<String> keys, Duration timeout, Supplier<T> probe) {
        long deadline = Stores.deadline(timeout);
        while (true) {
            T answer = pollOnce(deadline, probe);
            if (answer != null) {
                return answer;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new StoreTimeoutException(toString(), keys, timeout);
            }
            sleep(Math.min(left, POLL_NANOS));
        }
    }

    /** Probes once; null also when a lock or the file could not be had before the deadline. */
    private <T> T pollOnce(long deadline, Supplier<T> probe) {
        if (!tryAcquire(deadline)) {
            return null;
        }
        try {
            checkOpen();
            try (PosixFile file = PosixFile.open(toString(), path, false, false)) {
                if (file == null || !file.lock(false, deadline)) {
                    return null;
                }
                replayLocked(file);
                return probe.get();
            }
        } finally {
            lock.unlock();
        }
    }

    private PosixFile openWithin(boolean write, boolean create, long deadline, Duration timeout) {
        while (true) {
            PosixFile file = PosixFile.open(toString(), path, write, create);
            if (file != null) {
                return file;
            }
            // PyTorch would retry here too, but a missing directory rarely appears by itself.
            if (create) {
                throw new StoreException(
                        this + ": cannot create " + path + ": its directory does not exist");
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new StoreException(
                        this + ": " + path + " did not exist within " + timeout.toMillis() + " ms");
            }
            sleep(Math.min(left, POLL_NANOS));
        }
    }

    private void lockFile(PosixFile file, boolean exclusive, long deadline, Duration timeout) {
        if (!file.lock(exclusive, deadline)) {
            throw new StoreException(
                    this
                            + ": could not lock "
                            + path
                            + " within "
                            + timeout.toMillis()
                            + " ms; another process holds its lock");
        }
    }

    /**
     * Reads the records appended since the last replay; the file must be locked.
     *
     * @throws StoreException if this participant's file was replaced (deleted, then created again,
     *     as by the next job): its keys and counters are not this store's. An observer starts over
     *     on the new file instead.
     */
    private void replayLocked(PosixFile file) {
        Object now = file.identity();
        if (now != null && !now.equals(identity)) {
            if (identity != null) {
                if (!observer) { // and stays so: every later call fails the same way
                    throw new StoreException(
                            this
                                    + ": "
                                    + path
                                    + " was deleted and created again since this store opened it"
                                    + " (by another job?); its keys are not this store's");
                }
                cache.clear();
                offset = 0;
                releaseHeld();
            }
            hold(now);
        }
        long size = file.size();
        if (size < offset) {
            throw new StoreException(
                    this
                            + ": "
                            + path
                            + " shrank from "
                            + offset
                            + " to "
                            + size
                            + " bytes; something truncated or replaced it");
        }
        if (size > offset) {
            FileStoreLog.replay(toString(), path, file, offset, size, cache);
            offset = size;
        }
    }

    /**
     * Records the identity of the file being replayed, and holds a descriptor of its own open on
     * it: a deleted file's inode number is free for the next file created, often at once, and would
     * then look like the same file.
     */
    private void hold(Object now) {
        identity = now;
        PosixFile mine = PosixFile.open(toString(), path, false, false);
        if (mine != null && now.equals(mine.identity())) {
            held = mine;
        } else if (mine != null) {
            // The path names another file already: this one was replaced under the lock just
            // taken, and the next replay says so. Its inode is not held: a rare reuse of its
            // number would hide that replacement, as before.
            mine.close();
        }
    }

    private void releaseHeld() {
        identity = null;
        if (held != null) {
            PosixFile h = held;
            held = null;
            try {
                h.close();
            } catch (StoreException e) {
                // read-only, nothing was written through it, and Linux frees the descriptor
                // whatever close(2) reports: a close must not fail (or skip deleting the file) on
                // it
            }
        }
    }

    private void markClosed() {
        closed = true;
        releaseHeld();
    }

    /**
     * Whether the open file is another than the one replayed so far. Without this check a new file
     * as long as the old one, or longer, would be read on from the old offset: mid-record, or
     * keeping the old job's values.
     */
    private boolean replacedLocked(PosixFile file) {
        Object now = file.identity();
        return now != null && identity != null && !now.equals(identity);
    }

    /**
     * Appends a record at the end of the exclusively locked, just replayed file, and applies it, so
     * this instance need not read its own writes back.
     */
    private boolean appendLocked(PosixFile file, String fileKey, byte[] value) {
        writeLocked(file, FileStoreLog.encode(fileKey, value));
        FileStoreLog.apply(cache, fileKey, value);
        return true;
    }

    /** Writes whole records at the end of the exclusively locked, just replayed file. */
    private void writeLocked(PosixFile file, byte[] records) {
        try {
            file.write(offset, records);
        } catch (StoreException e) {
            // Take back a partial record, which would make the file unreadable for every rank.
            try {
                file.truncate(offset);
            } catch (StoreException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
        offset += records.length;
    }

    private long addLocked(PosixFile file, String fileKey, String key, long delta) {
        long value = counterAfterLocked(fileKey, key, delta);
        appendLocked(file, fileKey, Stores.formatCounter(value));
        return value;
    }

    /** Returns what a counter would hold after an add, writing nothing; fails on overflow. */
    private long counterAfterLocked(String fileKey, String key, long delta) {
        byte[] old = cache.get(fileKey);
        // PyTorch's FileStore counts a missing or empty value as 0.
        if (old == null || old.length == 0) {
            return delta;
        }
        return Stores.addCounter(toString(), key, Stores.parseCounter(toString(), key, old), delta);
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException(this + " is closed");
        }
    }

    private void acquire(long deadline, Duration timeout) {
        if (!tryAcquire(deadline)) {
            throw new StoreException(
                    this
                            + ": another thread kept this store busy for "
                            + timeout.toMillis()
                            + " ms");
        }
    }

    private boolean tryAcquire(long deadline) {
        try {
            return lock.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException(this + ": interrupted while waiting for another thread", e);
        }
    }

    private void sleep(long nanos) {
        try {
            TimeUnit.NANOSECONDS.sleep(nanos);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException(this + ": interrupted while polling " + path, e);
        }
    }
}
