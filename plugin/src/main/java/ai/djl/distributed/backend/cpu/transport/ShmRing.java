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

/**
 * A single-producer, single-consumer byte ring in shared memory: one direction between two ranks of
 * one host. The first {@link #CONTROL_BYTES} hold the cursors, each on its own cache line:
 *
 * <pre>
 * 0: head (bytes ever written, producer's)   64: tail (bytes ever read, consumer's)
 * 128: producer closed (0/1)                  then CAPACITY data bytes
 * </pre>
 *
 * The producer copies bytes in, then publishes {@code head} with release semantics; the consumer
 * reads {@code head} with acquire semantics, copies bytes out, then publishes {@code tail}. Each
 * side calls only its own methods, from one thread.
 */
final class ShmRing {

    static final int CONTROL_BYTES = 4096;
    private static final int HEAD = 0;
    private static final int TAIL = 64;
    private static final int CLOSED = 128;
    private static final VarHandle LONG =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final ByteBuffer control;
    private final ByteBuffer data;
    private final int capacity;
    private long cursor; // head for the producer, tail for the consumer: only this side writes it

    ShmRing(MappedByteBuffer mapping, boolean producer) {
        this.control = mapping.duplicate().order(ByteOrder.LITTLE_ENDIAN);
        this.capacity = mapping.capacity() - CONTROL_BYTES;
        this.data = mapping.slice(CONTROL_BYTES, capacity);
        this.cursor = (long) LONG.getAcquire(control, producer ? HEAD : TAIL);
    }

    /** Bytes the consumer may read now. */
    long available() {
        return (long) LONG.getAcquire(control, HEAD) - cursor;
    }

    /** Bytes the producer may write now. */
    long space() {
        return capacity - (cursor - (long) LONG.getAcquire(control, TAIL));
    }

    /** Whether the producer closed its end. */
    boolean isProducerClosed() {
        return (long) LONG.getAcquire(control, CLOSED) != 0;
    }

    /**
     * Consumer: copies up to {@code dst.remaining()} available bytes into {@code dst}.
     *
     * @param dst where the bytes go
     * @return the number of bytes copied
     */
    int read(ByteBuffer dst) {
        int n = (int) Math.min(available(), dst.remaining());
        if (n == 0) {
            return 0;
        }
        int at = (int) (cursor % capacity);
        int first = Math.min(n, capacity - at);
        dst.put(data.slice(at, first));
        if (first < n) {
            dst.put(data.slice(0, n - first));
        }
        cursor += n;
        LONG.setRelease(control, TAIL, cursor);
        return n;
    }

    /**
     * Producer: copies as many of {@code srcs}' remaining bytes as fit.
     *
     * @param srcs the bytes, in order
     * @return the number of bytes copied
     */
    long write(ByteBuffer[] srcs) {
        long free = space();
        long written = 0;
        for (ByteBuffer src : srcs) {
            while (src.hasRemaining() && free > 0) {
                int at = (int) (cursor % capacity);
                int n = (int) Math.min(Math.min(free, src.remaining()), capacity - at);
                ByteBuffer piece = src.slice(src.position(), n);
                data.put(at, piece, 0, n);
                src.position(src.position() + n);
                cursor += n;
                free -= n;
                written += n;
            }
            if (src.hasRemaining()) {
                break;
            }
        }
        if (written > 0) {
            LONG.setRelease(control, HEAD, cursor);
        }
        return written;
    }

    /** Producer: marks the end of the stream. */
    void closeProducer() {
        LONG.setRelease(control, CLOSED, 1L);
    }
}
