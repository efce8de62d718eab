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
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.RandomAccessFile;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A message that arrives before its receive, too large for the direct memory left to hold it, fails
 * the transport with a {@link CommunicationException} naming the sender, the message's length and
 * the cause; no {@code OutOfMemoryError} escapes to the thread that posts a receive, and the link
 * is not left half-way into a frame (which later failed the group with a {@code
 * NullPointerException}).
 *
 * <p>The out-of-memory is real: two ranks over TCP in a child JVM whose direct memory is capped at
 * 32 MiB; the sender's 64 MiB comes from a mapped sparse file, which that cap does not count.
 */
@Timeout(120)
class EarlyMessageMemoryTest {

    private static final int BYTES = 64 << 20;
    private static final Duration TIMEOUT = Duration.ofSeconds(20);
    private static final OpSignature SEND = new OpSignature(OpSignature.SEND, 0, 0, 0, 1);
    private static final OpSignature ALL_REDUCE =
            new OpSignature(OpSignature.ALL_REDUCE, 0, 0, 0, BYTES / 4);

    /**
     * {@code early}: a point-to-point message with no receive, stashed by the I/O thread. {@code
     * parked}: a collective message left in the stream for its receive, stashed by the thread that
     * posts a point-to-point receive behind it.
     */
    @ParameterizedTest
    @ValueSource(strings = {"early", "parked"})
    void noMemoryForAnEarlyMessageFailsTheTransportNamingIt(String scenario) throws Exception {
        try (JavaProcess child =
                JavaProcess.start(
                        Child.class,
                        Map.of("JDK_JAVA_OPTIONS", "-XX:MaxDirectMemorySize=32m"),
                        scenario)) {
            child.assertSuccess(Duration.ofSeconds(90));
        }
    }

    /** The child JVM: runs one scenario, and exits non-zero with the reason if it fails. */
    public static final class Child {

        private Child() {}

        /**
         * Runs a scenario.
         *
         * @param args the scenario's name
         * @throws Exception on failure
         */
        public static void main(String[] args) throws Exception {
            try {
                run(args[0]);
            } catch (Throwable e) {
                e.printStackTrace();
                System.exit(1);
            }
            System.exit(0);
        }

        private static void run(String scenario) throws Exception {
            ByteBuffer big = sparse();
            InetAddress loopback = InetAddress.getLoopbackAddress();
            try (HashStore store = new HashStore()) {
                CompletableFuture<TcpTransport> other =
                        CompletableFuture.supplyAsync(
                                () -> TcpTransport.connect(store, 1, 2, loopback, TIMEOUT));
                TcpTransport zero = TcpTransport.connect(store, 0, 2, loopback, TIMEOUT);
                TcpTransport one = other.get(60, TimeUnit.SECONDS);
                try {
                    long p2p = Transport.p2pSlot(0, 0);
                    if (scenario.equals("early")) {
                        one.send(0, p2p, SEND, big);
                        awaitTrue(() -> zero.getFailure() != null);
                    } else {
                        one.send(0, Transport.collectiveSlot(0, 0), ALL_REDUCE, big);
                        // Rank 0 has read the header, and parked the body in the stream.
                        awaitTrue(() -> zero.links[1].isActive());
                        Transfer recv = zero.recv(1, p2p, SEND, ByteBuffer.allocate(4));
                        check(awaitFailure(recv));
                    }
                    check(zero.getFailure());
                } finally {
                    zero.close();
                    one.close();
                }
            }
        }

        private static void check(CommunicationException e) {
            String m = String.valueOf(e);
            if (e == null
                    || e.getPeerRank() != 1
                    || !m.contains("rank 1")
                    || !m.contains(BYTES + "-byte message")
                    || !m.contains("direct buffer memory")) {
                throw new AssertionError("expected a failure naming rank 1 and the message", e);
            }
        }

        private static CommunicationException awaitFailure(Transfer t) {
            try {
                t.await(Deadline.after(TIMEOUT));
            } catch (CommunicationException e) {
                return e;
            }
            throw new AssertionError("the receive completed");
        }

        /** 64 MiB of zeros that cost neither memory nor direct-memory budget: a sparse file. */
        private static ByteBuffer sparse() throws Exception {
            Path file = Files.createTempFile("djl-dist-sparse-", ".bin");
            try {
                try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
                    raf.setLength(BYTES);
                }
                try (FileChannel ch = FileChannel.open(file)) {
                    return ch.map(FileChannel.MapMode.READ_ONLY, 0, BYTES);
                }
            } finally {
                Files.delete(file); // the mapping outlives the file's name
            }
        }

        private static void awaitTrue(BooleanSupplier condition) throws InterruptedException {
            long until = System.nanoTime() + TIMEOUT.toNanos();
            while (!condition.getAsBoolean()) {
                if (System.nanoTime() > until) {
                    throw new AssertionError("the condition never held");
                }
                Thread.sleep(1);
            }
        }
    }
}
