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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.rendezvous.Rendezvous;

import org.junit.jupiter.api.Test;

import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The store contract on {@link FileStore}, then its own behaviour: PyTorch's bytes on disk, the
 * reference counting that deletes the file, corrupt files, and {@code flock(2)} against another
 * program. Expected file contents are built by {@link #records}, written here independently of the
 * store's own encoder.
 */
class FileStoreTest extends StoreContractTest {

    private Path dir;
    private Path path;

    /** {@inheritDoc} */
    @Override
    protected Store createStore() throws IOException {
        dir = Files.createTempDirectory("djl-file-store-");
        path = dir.resolve("store");
        return new FileStore(path);
    }

    /** {@inheritDoc} */
    @Override
    protected Store connectAgain(Store store) {
        return new FileStore(path);
    }

    /** {@inheritDoc} */
    @Override
    protected long internalKeys() {
        return 1;
    }

    /** {@inheritDoc} */
    @Override
    protected void cleanUp() throws IOException {
        deleteTree(dir);
    }

    /**
     * Encodes records as PyTorch lays them out: u32 key length, key, u32 value length, value.
     *
     * @param keysAndValues keys and values, alternately, as UTF-8 text
     * @return the bytes
     */
    static byte[] records(String... keysAndValues) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (String field : keysAndValues) {
            byte[] bytes = field.getBytes(StandardCharsets.UTF_8);
            out.writeBytes(le32(bytes.length));
            out.writeBytes(bytes);
        }
        return out.toByteArray();
    }

    static byte[] le32(long value) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt((int) value).array();
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    static void deleteTree(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(p);
            }
        }
    }

    @Test
    void writesPyTorchRecords() throws IOException {
        assertArrayEquals(records("refcount/", "1"), Files.readAllBytes(path));
        store.set("k", "v");
        assertEquals(5, store.add("n", 5));
        assertEquals(6, store.add("n", 1));
        assertTrue(store.deleteKey("k"));
        // PyTorch writes a matching compareSet even when it changes nothing, and no mismatch.
        store.compareSet("n", b("6"), b("6"));
        store.compareSet("n", b("x"), b("7"));
        store.set("ключ", new byte[] {0, -1});
        byte[] expected =
                concat(
                        records("refcount/", "1", "/k", "v", "/n", "5", "/n", "6", "-/k", ""),
                        records("/n", "6"),
                        le32(9),
                        "/ключ".getBytes(StandardCharsets.UTF_8), // 2 bytes a letter
                        le32(2),
                        new byte[] {0, -1});
        assertArrayEquals(expected, Files.readAllBytes(path));

        store.close();
        byte[] closed = concat(expected, records("cleanup/", "1", "refcount/", "0"));
        assertArrayEquals(closed, Files.readAllBytes(path), "numWorkers -1 keeps the file");
        store.close();
        assertArrayEquals(closed, Files.readAllBytes(path), "a second close writes nothing");
    }

    @Test
    void readsRecordsOfOtherWriters() throws IOException {
        Path file = dir.resolve("by-hand");
        byte[] initial =
                records("/a", "1", "/b", "x", "/a", "2", "-/b", "", "/-c", "neg", "refcount/", "3");
        Files.write(file, initial);
        try (FileStore s = new FileStore(file)) {
            assertEquals("2", s.getString("a"), "the last write wins");
            assertFalse(s.check(List.of("b")), "a tombstone erases");
            assertEquals("neg", s.getString("-c"));
            assertEquals(3, s.numKeys());
            // Appended after this instance replayed: read from its cached offset.
            Files.write(file, records("/b", "back", "-/a", ""), StandardOpenOption.APPEND);
            assertEquals("back", s.getString("b"));
            assertFalse(s.check(List.of("a")));
            assertEquals(3, s.add("a", 3), "a deleted counter restarts at 0");
        }
        byte[] expected =
                concat(
                        initial,
                        records("refcount/", "4", "/b", "back", "-/a", "", "/a", "3"),
                        records("cleanup/", "1", "refcount/", "3"));
        assertArrayEquals(expected, Files.readAllBytes(file));
    }

    @Test
    void emptyCounterCountsAsZeroAsInPyTorch() {
        store.set("e", new byte[0]);
        assertEquals(4, store.add("e", 4));
    }

    @Test
    void lastOfNumWorkersDeletesTheFile() {
        Path file = dir.resolve("two");
        FileStore first = new FileStore(file, 2);
        FileStore second = new FileStore(file, 2);
        first.set("x", "1");
        first.close();
        assertTrue(Files.exists(file), "one of two instances is still open");
        assertEquals("1", second.getString("x"));
        second.close();
        assertFalse(Files.exists(file));
        first.close();
        second.close();
        assertFalse(Files.exists(file), "closing again must not recreate the file");
    }

    @Test
    void fileStaysUntilNumWorkersHaveClosed() {
        Path file = dir.resolve("late");
        new FileStore(file, 2).close();
        assertTrue(Files.exists(file), "only one of two workers has closed");
        new FileStore(file, 2).close();
        assertFalse(Files.exists(file));
    }

    @Test
    void minusOneNeverDeletes() {
        Path file = dir.resolve("kept");
        FileStore first = new FileStore(file);
        FileStore second = new FileStore(file, -1);
        first.close();
        second.close();
        assertTrue(Files.exists(file));
        try (FileStore third = new FileStore(file)) {
            assertEquals(2, third.numKeys(), "refcount/ and cleanup/");
        }
    }

    @Test
    void closeAfterTheFileIsGoneDoesNothing() throws IOException {
        Path file = dir.resolve("gone");
        FileStore s = new FileStore(file, 1);
        Files.delete(file);
        s.close();
        assertFalse(Files.exists(file));
        assertThrows(IllegalStateException.class, () -> s.set("k", "v"));
    }

    @Test
    void useAfterCloseIsRejected() {
        FileStore s = new FileStore(dir.resolve("closed"));
        s.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, () -> s.getString("k"));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> s.add("k", 1));
        assertThrows(IllegalStateException.class, s::numKeys);
    }

    @Test
    void getTimesOutWhileTheFileIsMissing() throws IOException {
        FileStore s = new FileStore(dir.resolve("missing"));
        Files.delete(s.getPath());
        s.setTimeout(SHORT);
        StoreTimeoutException e = assertThrows(StoreTimeoutException.class, () -> s.get("k"));
        assertEquals(List.of("k"), e.getKeys());
        assertTrue(e.getMessage().contains(s.toString()), e.getMessage());
        assertThrows(StoreException.class, () -> s.numKeys());
        s.close();
    }

    @Test
    void corruptFilesFailClearly() throws IOException {
        assertCorrupt(concat(le32(0xFFFF_FFF0L), b("junk")), "offset 0");
        assertCorrupt(concat(le32(2), b("/a"), le32(0x7FFF_FFFF), b("x")), "offset 0");
        assertCorrupt(concat(records("/a", "1"), le32(3), b("/b")), "offset 11");
        assertCorrupt(concat(records("/a", "1"), new byte[] {1, 0}), "offset 11");

        // Garbage appended under an open instance: its next read fails, and it recovers.
        byte[] good = Files.readAllBytes(path);
        Files.write(path, le32(-1), StandardOpenOption.APPEND);
        StoreException e = assertThrows(StoreException.class, () -> store.get("k"));
        assertTrue(e.getMessage().contains("offset " + good.length), e.getMessage());
        Files.write(path, good);
        store.set("k", "v");
        assertEquals("v", store.getString("k"));
    }

    private void assertCorrupt(byte[] content, String offset) throws IOException {
        Path file = dir.resolve("corrupt");
        Files.write(file, content);
        StoreException e = assertThrows(StoreException.class, () -> new FileStore(file));
        assertTrue(e.getMessage().contains(file.toString()), e.getMessage());
        assertTrue(e.getMessage().contains(offset), e.getMessage());
    }

    @Test
    void badArgumentsOfTheConstructorAreRejected() {
        Path file = dir.resolve("never");
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> new FileStore(file, 0));
        assertEquals("numWorkers: 0 (expected: -1 or a positive count)", e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> new FileStore(file, -2));
        assertThrows(IllegalArgumentException.class, () -> new FileStore(null));
        assertFalse(Files.exists(file));
        StoreException missing =
                assertThrows(
                        StoreException.class, () -> new FileStore(dir.resolve("no/such/file")));
        assertTrue(missing.getMessage().contains("directory"), missing.getMessage());
    }

    @Test
    void describesItselfAndItsApi() {
        assertEquals("FileStore(" + path + ")", store.toString());
        assertEquals(path, ((FileStore) store).getPath());
        assertFalse(store.hasExtendedApi(), "PyTorch's FileStore has only the fallbacks");
    }

    @Test
    void flockOfAnotherProgramExcludesIt() throws Exception {
        Path flock = Path.of("/usr/bin/flock");
        // util-linux is essential on Debian: a missing flock(1) fails rather than skips
        assertTrue(Files.isExecutable(flock), "util-linux flock(1) is not installed");
        store.set("k", "v");
        try (Holder shared = new Holder(flock, "-s")) {
            store.setTimeout(SHORT);
            assertEquals("v", store.getString("k"), "readers share a shared lock");
            StoreException e = assertThrows(StoreException.class, () -> store.set("k", "w"));
            assertTrue(e.getMessage().contains("lock"), e.getMessage());
            shared.release();
            store.setTimeout(Duration.ofSeconds(20));
            store.set("k", "w");
            assertTrue(shared.released(), "the write went in before the other lock was released");
        }
        try (Holder exclusive = new Holder(flock, "-x")) {
            store.setTimeout(SHORT);
            assertThrows(StoreException.class, () -> store.numKeys());
            assertThrows(StoreTimeoutException.class, () -> store.get("k"));
            exclusive.release();
            store.setTimeout(Duration.ofSeconds(20));
            assertEquals("w", store.getString("k"));
            assertTrue(exclusive.released());
        }
    }

    @Test
    void aCloseThatCouldNotLockTheFileCanBeRetried() throws Exception {
        Path flock = Path.of("/usr/bin/flock");
        assertTrue(Files.isExecutable(flock), "util-linux flock(1) is not installed");
        FileStore second = new FileStore(path); // refcount/ goes to 2
        try (Holder exclusive = new Holder(flock, "-x")) {
            second.setTimeout(SHORT);
            StoreException e = assertThrows(StoreException.class, second::close);
            assertTrue(e.getMessage().contains("lock"), e.getMessage());
            assertFalse(exclusive.released(), "the close gave up while the lock was held");
        }
        // The reference the failed close could not give up is given up by the next close.
        second.setTimeout(Duration.ofSeconds(20));
        second.close();
        byte[] tail = records("cleanup/", "1", "refcount/", "1");
        byte[] all = Files.readAllBytes(path);
        assertArrayEquals(tail, Arrays.copyOfRange(all, all.length - tail.length, all.length));
        assertThrows(IllegalStateException.class, () -> second.set("k", "v"));
    }

    @Test
    void aCloseThatFailsWritesNeitherCounter() throws IOException {
        Path file = dir.resolve("bad-refcount");
        FileStore s = new FileStore(file, 1);
        // A refcount/ that is no number: the close cannot give the reference up, and must not
        // count itself finished either, or its retries would count it once each.
        Files.write(file, FileStoreLog.encode("refcount/", b("x")), StandardOpenOption.APPEND);
        byte[] before = Files.readAllBytes(file);
        assertThrows(StoreException.class, s::close);
        assertThrows(StoreException.class, s::close);
        byte[] after = Files.readAllBytes(file);
        assertNull(readLog(after).get("cleanup/"), "cleanup/ counted a close that failed");
        assertArrayEquals(before, after, "a failed close wrote something");
        // Repaired, the next close gives the reference up and, the only worker, deletes the file.
        Files.write(file, records("refcount/", "1"), StandardOpenOption.APPEND);
        s.close();
        assertFalse(Files.exists(file));
    }

    @Test
    void counterOverflowIsRefusedAndLeavesTheValue() throws IOException {
        assertEquals(Long.MAX_VALUE, store.add("c", Long.MAX_VALUE));
        long size = Files.size(path);
        StoreException up = assertThrows(StoreException.class, () -> store.add("c", 1));
        for (String part : List.of(store.toString(), "'c'", "9223372036854775807", " 1 ")) {
            assertTrue(up.getMessage().contains(part), up.getMessage() + " lacks " + part);
        }
        assertEquals("9223372036854775807", store.getString("c"));
        assertEquals(size, Files.size(path), "a refused add wrote a record");

        assertEquals(Long.MIN_VALUE, store.add("d", Long.MIN_VALUE));
        StoreException down = assertThrows(StoreException.class, () -> store.add("d", -1));
        assertTrue(down.getMessage().contains("-9223372036854775808"), down.getMessage());
        assertEquals("-9223372036854775808", store.getString("d"));
        assertEquals(9223372036854775806L, store.add("c", -1), "a counter in range still adds");
    }

    @Test
    void openingIsBoundedByTheTimeoutGivenToTheConstructor() throws Exception {
        Path flock = Path.of("/usr/bin/flock");
        assertTrue(Files.isExecutable(flock), "util-linux flock(1) is not installed");
        String url = "file://" + path + "?rank=0&world_size=2";
        try (Holder exclusive = new Holder(flock, "-x")) {
            // The default timeout is 300 s: an opening that ignored its own would outlast this.
            assertTimeoutPreemptively(
                    Duration.ofSeconds(20),
                    () -> {
                        StoreException e =
                                assertThrows(
                                        StoreException.class,
                                        () -> new FileStore(path, 2, Duration.ofSeconds(2)));
                        assertTrue(e.getMessage().contains("2000 ms"), e.getMessage());
                        StoreException r =
                                assertThrows(
                                        StoreException.class,
                                        () ->
                                                Rendezvous.create(
                                                        url, -1, -1, Duration.ofSeconds(2)));
                        assertTrue(r.getMessage().contains("2000 ms"), r.getMessage());
                    });
            assertFalse(exclusive.released(), "the lock was let go before the openings gave up");
        }
        Path never = dir.resolve("never");
        for (Duration bad : new Duration[] {null, Duration.ZERO, Duration.ofSeconds(-1)}) {
            assertThrows(IllegalArgumentException.class, () -> new FileStore(never, 2, bad));
        }
        assertFalse(Files.exists(never));
        try (FileStore s = new FileStore(never, 2, Duration.ofSeconds(7))) {
            assertEquals(Duration.ofSeconds(7), s.getTimeout());
        }
    }

    @Test
    void anObserverCountsNeitherReferenceNorClose() throws IOException {
        Path file = dir.resolve("observed");
        Duration timeout = Duration.ofSeconds(20);
        FileStore observer = FileStore.observe(file, timeout);
        assertEquals(timeout, observer.getTimeout());
        assertFalse(Files.exists(file), "opening an observer created the file");
        observer.setTimeout(SHORT);
        assertThrows(StoreTimeoutException.class, () -> observer.get("k"));
        assertThrows(StoreException.class, observer::numKeys);
        assertFalse(Files.exists(file), "a read created the file");
        observer.setTimeout(timeout);
        observer.set("k", "v"); // a write creates it
        try (FileStore worker = new FileStore(file, 1)) {
            assertEquals("v", worker.getString("k"));
            assertEquals(7, observer.add("n", 7));
        }
        assertFalse(Files.exists(file), "the only worker closed");
        observer.close();
        assertThrows(IllegalStateException.class, () -> observer.get("k"));

        FileStore worker = new FileStore(file, 1);
        try (FileStore second = FileStore.observe(file, timeout)) {
            assertEquals(1, second.numKeys(), "refcount/ of the worker alone");
        }
        assertArrayEquals(records("refcount/", "1"), Files.readAllBytes(file));
        worker.close();
        assertFalse(Files.exists(file));
        assertThrows(IllegalArgumentException.class, () -> FileStore.observe(file, null));
        assertThrows(IllegalArgumentException.class, () -> FileStore.observe(null, timeout));
    }

    @Test
    void anObserverOpenAcrossAReplacementOfItsFileReadsTheNewOne() throws IOException {
        Path file = dir.resolve("replaced");
        try (FileStore observer = FileStore.observe(file, Duration.ofSeconds(20))) {
            try (FileStore job1 = new FileStore(file, 1)) {
                job1.set("k", "old");
                job1.set("gone", "1");
                assertEquals("old", observer.getString("k"));
            }
            assertFalse(Files.exists(file), "job 1's only worker deleted the file");
            // The next job's file is longer than what the observer read: without the file's
            // identity it would be read on from the old offset, keeping the old job's values.
            try (FileStore job2 = new FileStore(file, 1)) {
                job2.set("k", "new");
                job2.set("other", "a longer value than the first job's");
                job2.set("more", "x");
                assertEquals("new", observer.getString("k"));
                assertFalse(observer.check(List.of("gone")), "the old job's key is gone");
                assertEquals(4, observer.numKeys(), "refcount/, k, other and more");
            }
        }
    }

    @Test
    void aParticipantThatOutlivesItsFileFailsAndLeavesTheNextJobsCountersAlone()
            throws IOException {
        Path file = dir.resolve("outlived");
        FileStore old = new FileStore(file); // never deletes the file
        old.set("k", "old");
        Files.delete(file); // an operator clears the stale file before the next run
        try (FileStore fresh = new FileStore(file, 1)) {
            fresh.set("k", "new");
            fresh.set("x", "a value longer than the old one's");
            StoreException e = assertThrows(StoreException.class, () -> old.getString("k"));
            assertTrue(e.getMessage().contains("deleted and created again"), e.getMessage());
            assertThrows(StoreException.class, () -> old.set("k", "stale"), "and stays failed");
            old.close(); // its reference went with the old file: nothing is written
            assertEquals(
                    Map.of(
                            "/k",
                            "new",
                            "/x",
                            "a value longer than the old one's",
                            "refcount/",
                            "1"),
                    readLog(Files.readAllBytes(file)));
        }
        assertFalse(Files.exists(file), "the new job's only worker closed, so the file went");
    }

    @Test
    void aConstructorThatFailsKeepsNoDescriptorOpen() throws IOException {
        Path file = dir.resolve("bad-refcount");
        Files.write(file, records("refcount/", "many")); // no counter: the open's add fails
        long before = openDescriptors();
        for (int i = 0; i < 20; ++i) {
            assertThrows(StoreException.class, () -> new FileStore(file, 2));
        }
        // other threads of this JVM may open a few meanwhile, never one per failed constructor
        assertTrue(openDescriptors() - before < 10, "descriptors left: " + openDescriptors());
    }

    private static long openDescriptors() throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.count();
        }
    }

    /** Reads PyTorch's records as this test lays them out: the last value of each key. */
    private static Map<String, String> readLog(byte[] log) {
        ByteBuffer in = ByteBuffer.wrap(log).order(ByteOrder.LITTLE_ENDIAN);
        Map<String, String> last = new HashMap<>();
        while (in.hasRemaining()) {
            byte[] key = new byte[in.getInt()];
            in.get(key);
            byte[] value = new byte[in.getInt()];
            in.get(value);
            last.put(
                    new String(key, StandardCharsets.UTF_8),
                    new String(value, StandardCharsets.UTF_8));
        }
        return last;
    }

    /**
     * A flock(1) process holding a lock on the store's file until {@link #release} (or {@link
     * #close}), then for about a second more; it creates a marker file just before it lets go, so a
     * test can tell that it waited for the release. Held until told, the lock outlasts any pause of
     * the test (a short timeout that ran out on it cannot have run past the release).
     */
    private final class Holder implements AutoCloseable {

        private final Process process;
        private final Path marker;

        Holder(Path flock, String mode) throws IOException {
            marker = dir.resolve("released" + mode);
            process =
                    new ProcessBuilder(
                                    flock.toString(),
                                    mode,
                                    path.toString(),
                                    "sh",
                                    "-c",
                                    "echo locked; read -r go; sleep 1; : > '" + marker + "'")
                            .redirectErrorStream(true)
                            .start();
            BufferedReader out =
                    new BufferedReader(
                            new InputStreamReader(
                                    process.getInputStream(), StandardCharsets.UTF_8));
            assertEquals("locked", out.readLine());
        }

        boolean released() {
            return Files.exists(marker);
        }

        /** Lets the lock go about a second from now. Idempotent. */
        void release() {
            try {
                process.getOutputStream().close(); // read sees the end of its input
            } catch (IOException e) {
                // the process is gone: nothing is held
            }
        }

        @Override
        public void close() {
            release();
            try {
                if (process.waitFor(20, TimeUnit.SECONDS)) {
                    return;
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
