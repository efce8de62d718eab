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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.HashStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Timeouts too long for {@link Duration#toNanos()} mean "wait", not an overflow. */
@Timeout(60)
class DeadlineTest {

    private static final long YEAR_NANOS = Duration.ofDays(365).toNanos();
    private static final OpSignature SIG = new OpSignature(OpSignature.SEND, 0, 0, 0, 1);

    static Stream<Duration> endless() {
        return Stream.of(
                ChronoUnit.FOREVER.getDuration(),
                Duration.ofSeconds(Long.MAX_VALUE),
                Duration.ofNanos(Long.MAX_VALUE),
                Duration.ofNanos(Long.MAX_VALUE - 1_000_000_000L));
    }

    /**
     * The deadline lies decades ahead, and a waiter adding a grace period to what is left (as the
     * board does, 2 s) still gets a time in the future, not one wrapped into the past.
     */
    @ParameterizedTest
    @MethodSource("endless")
    void anEndlessTimeoutIsDecadesAhead(Duration timeout) {
        Deadline d = Deadline.after(timeout);
        assertEquals(timeout, d.timeout());
        assertTrue(d.remainingNanos() > 50 * YEAR_NANOS, d.remainingNanos() + " ns left");
        long giveUp = System.nanoTime() + d.remainingNanos() + 2_000_000_000L;
        assertTrue(giveUp - System.nanoTime() > 50 * YEAR_NANOS, "the give-up time wrapped");
    }

    /**
     * Two ranks connect and exchange a message with no timeout to speak of. Nothing here would ever
     * give up, and @Timeout only interrupts, so the body runs on its own thread and is abandoned
     * after a minute.
     */
    @Test
    void ranksConnectAndExchangeWithATimeoutOfForever() {
        assertTimeoutPreemptively(Duration.ofSeconds(60), DeadlineTest::connectAndExchange);
    }

    private static void connectAndExchange() throws Exception {
        Duration forever = ChronoUnit.FOREVER.getDuration();
        InetAddress loopback = InetAddress.getLoopbackAddress();
        try (HashStore store = new HashStore()) {
            CompletableFuture<TcpTransport> other =
                    CompletableFuture.supplyAsync(
                            () -> TcpTransport.connect(store, 1, 2, loopback, forever));
            try (TcpTransport zero = TcpTransport.connect(store, 0, 2, loopback, forever);
                    TcpTransport one = other.get(60, TimeUnit.SECONDS)) {
                long slot = Transport.p2pSlot(0, 0);
                ByteBuffer in = ByteBuffer.allocate(4);
                Transfer recv = zero.recv(1, slot, SIG, in);
                one.send(0, slot, SIG, ByteBuffer.allocate(4).putInt(0, 42))
                        .await(Deadline.after(forever));
                recv.await(Deadline.after(forever));
                assertEquals(42, in.getInt(0));
            }
        }
    }
}
