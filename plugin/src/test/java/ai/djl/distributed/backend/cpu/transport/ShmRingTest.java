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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.Random;

/** The shared-memory ring as a byte stream: order, wrap-around, back-pressure and end of stream. */
@Timeout(60)
class ShmRingTest {

    private static final int CAPACITY = 1000; // not a power of two: wrap at odd offsets

    @TempDir Path dir;

    private MappedByteBuffer map(Path file) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(ShmRing.CONTROL_BYTES + CAPACITY);
            return f.getChannel()
                    .map(FileChannel.MapMode.READ_WRITE, 0, ShmRing.CONTROL_BYTES + CAPACITY);
        }
    }

    @Test
    void streamsBytesInOrderAcrossWrapsBetweenTwoThreads() throws Exception {
        Path file = dir.resolve("ring");
        // Two mappings of one file, as two processes have.
        ShmRing producer = new ShmRing(map(file), true);
        ShmRing consumer = new ShmRing(map(file), false);
        byte[] sent = new byte[200_000];
        new Random(42).nextBytes(sent);
        Thread t =
                new Thread(
                        () -> {
                            Random r = new Random(7);
                            int at = 0;
                            while (at < sent.length) {
                                int n = Math.min(sent.length - at, 1 + r.nextInt(700));
                                // A frame may be split over several buffers.
                                int split = r.nextInt(n + 1);
                                ByteBuffer[] parts = {
                                    ByteBuffer.wrap(sent, at, split),
                                    ByteBuffer.wrap(sent, at + split, n - split)
                                };
                                long done = 0;
                                while (done < n) {
                                    done += producer.write(parts);
                                    Thread.onSpinWait();
                                }
                                at += n;
                            }
                            producer.closeProducer();
                        });
        t.start();
        ByteBuffer got = ByteBuffer.allocate(sent.length);
        Random r = new Random(9);
        while (got.hasRemaining()) {
            ByteBuffer piece =
                    got.slice(got.position(), Math.min(got.remaining(), 1 + r.nextInt(900)));
            int n = consumer.read(piece);
            got.position(got.position() + n);
            assertTrue(consumer.available() <= CAPACITY);
        }
        t.join();
        assertArrayEquals(sent, got.array());
        assertEquals(0, consumer.available());
        assertTrue(consumer.isProducerClosed());
    }

    @Test
    void aFullRingTakesNothingMoreUntilRead() throws Exception {
        Path file = dir.resolve("full");
        ShmRing producer = new ShmRing(map(file), true);
        ShmRing consumer = new ShmRing(map(file), false);
        ByteBuffer big = ByteBuffer.allocate(CAPACITY + 10);
        assertEquals(CAPACITY, producer.write(new ByteBuffer[] {big}));
        assertEquals(0, producer.space());
        assertEquals(0, producer.write(new ByteBuffer[] {big}));
        assertEquals(10, big.remaining());
        assertEquals(300, consumer.read(ByteBuffer.allocate(300)));
        assertEquals(300, producer.space());
        assertEquals(10, producer.write(new ByteBuffer[] {big}));
    }
}
