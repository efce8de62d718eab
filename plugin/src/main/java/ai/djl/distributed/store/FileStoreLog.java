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

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;

/**
 * The record format of PyTorch's {@code FileStore} file: an append-only sequence of {@code u32
 * keyLength | key | u32 valueLength | value}, lengths little-endian, no header. A key starting with
 * {@code "-"} is a tombstone erasing the key named by the rest of it; otherwise the last record of
 * a key wins.
 *
 * <p>Replay reads the file in large chunks, not a call per field, and checks every length against
 * the file's size before allocating, so a truncated or corrupt file gives a {@link StoreException}
 * naming the offset instead of an {@code OutOfMemoryError}.
 */
final class FileStoreLog {

    /** The prefix of a tombstone's key. */
    static final String DELETE_PREFIX = "-";

    /** How much replay reads at once; a larger value is read straight into its own array. */
    private static final int CHUNK = 64 * 1024;

    private final String owner;
    private final Path path;
    private final PosixFile file;
    private final long end;
    private byte[] window = new byte[0];
    private long windowStart;
    private int windowLength;

    private FileStoreLog(String owner, Path path, PosixFile file, long end) {
        this.owner = owner;
        this.path = path;
        this.file = file;
        this.end = end;
    }

    /**
     * Encodes one record.
     *
     * @param key the key as stored in the file (with its {@code "/"} or {@code "-/"} prefix)
     * @param value the value
     * @return the record's bytes
     * @throws StoreException if the record would not fit in one array
     */
    static byte[] encode(String key, byte[] value) {
        byte[] k = key.getBytes(StandardCharsets.UTF_8);
        byte[] record = new byte[recordSize(k.length, value.length)];
        putLength(record, 0, k.length);
        System.arraycopy(k, 0, record, 4, k.length);
        putLength(record, 4 + k.length, value.length);
        System.arraycopy(value, 0, record, 8 + k.length, value.length);
        return record;
    }

    /**
     * Returns the size of a record, checked before anything is allocated or written.
     *
     * @param keyBytes the length of the encoded key
     * @param valueBytes the length of the value
     * @return {@code 4 + keyBytes + 4 + valueBytes}
     * @throws StoreException naming the sizes if that is past {@link Stores#MAX_VALUE_BYTES}, the
     *     largest array a store makes
     */
    static int recordSize(int keyBytes, int valueBytes) {
        // In a long: in an int, a value near 2 GiB wraps the sum negative or small.
        long size = 4L + keyBytes + 4L + valueBytes;
        if (size > Stores.MAX_VALUE_BYTES) {
            throw new StoreException(
                    "FileStore: a record of a "
                            + keyBytes
                            + "-byte key and a "
                            + valueBytes
                            + "-byte value takes "
                            + size
                            + " bytes, past the largest a store writes at once, "
                            + Stores.MAX_VALUE_BYTES);
        }
        return (int) size;
    }

    /**
     * Applies one record to a replayed map, exactly as replaying it from the file would.
     *
     * @param map the keys and values replayed so far
     * @param key the record's key
     * @param value the record's value
     */
    static void apply(Map<String, byte[]> map, String key, byte[] value) {
        if (key.startsWith(DELETE_PREFIX)) {
            map.remove(key.substring(DELETE_PREFIX.length()));
        } else {
            map.put(key, value);
        }
    }

    /**
     * Replays the records between two offsets of a locked file into a map.
     *
     * @param owner the store, named in error messages
     * @param path the file's path, named in error messages
     * @param file the file, locked by the caller
     * @param start the offset replayed up to so far; a record starts there
     * @param end the file's size
     * @param map the map to update
     * @throws StoreException if a record is truncated or its lengths are impossible
     */
    static void replay(
            String owner,
            Path path,
            PosixFile file,
            long start,
            long end,
            Map<String, byte[]> map) {
        FileStoreLog log = new FileStoreLog(owner, path, file, end);
        long record = start;
        while (record < end) {
            long keyLength = log.length(record, record, "key");
            byte[] key = log.bytes(record + 4, (int) keyLength);
            long valueAt = record + 4 + keyLength;
            long valueLength = log.length(record, valueAt, "value");
            byte[] value = log.bytes(valueAt + 4, (int) valueLength);
            apply(map, new String(key, StandardCharsets.UTF_8), value);
            record = valueAt + 4 + valueLength;
        }
    }

    /** Reads a length field and checks that the field it measures lies within the file. */
    private long length(long record, long position, String field) {
        if (end - position < 4) {
            throw corrupt(record, "its " + field + " length is cut off by the end of the file");
        }
        byte[] b = bytes(position, 4);
        long length =
                (b[0] & 0xffL) | (b[1] & 0xffL) << 8 | (b[2] & 0xffL) << 16 | (b[3] & 0xffL) << 24;
        if (length > end - position - 4) {
            throw corrupt(
                    record,
                    "its "
                            + field
                            + " length "
                            + length
                            + " runs past the end of the file ("
                            + end
                            + " bytes)");
        }
        if (length > Integer.MAX_VALUE - 8) {
            throw corrupt(record, "its " + field + " of " + length + " bytes is too large");
        }
        return length;
    }

    /** Returns bytes known to lie within the file, read through the window where small. */
    private byte[] bytes(long position, int length) {
        byte[] out = new byte[length];
        if (length > CHUNK) {
            file.read(position, out, 0, length);
            return out;
        }
        if (position < windowStart || position + length > windowStart + windowLength) {
            int fill = (int) Math.min(CHUNK, end - position);
            if (window.length < fill) {
                window = new byte[fill];
            }
            file.read(position, window, 0, fill);
            windowStart = position;
            windowLength = fill;
        }
        System.arraycopy(window, (int) (position - windowStart), out, 0, length);
        return out;
    }

    private StoreException corrupt(long record, String what) {
        return new StoreException(
                owner
                        + ": "
                        + path
                        + " is truncated or corrupt at the record at offset "
                        + record
                        + ": "
                        + what);
    }

    private static void putLength(byte[] record, int at, int length) {
        record[at] = (byte) length;
        record[at + 1] = (byte) (length >>> 8);
        record[at + 2] = (byte) (length >>> 16);
        record[at + 3] = (byte) (length >>> 24);
    }
}
