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
package ai.djl.distributed.store.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A SET that wakes many waiters races each waiter's CANCEL_WAIT, across several event loops. A
 * client must read either WAIT_CANCELED alone (cancelled first) or STOP_WAITING then WAIT_CANCELED
 * (woken first); WAIT_CANCELED followed by a stray STOP_WAITING would desynchronise it.
 */
@Timeout(120)
class WaitCancelRaceTest {

    @Test
    void cancelReplyNeverOvertakesStopWaiting() throws Exception {
        int waiters = 48;
        int rounds = 60;
        AtomicInteger inverted = new AtomicInteger();
        AtomicInteger raced = new AtomicInteger();
        try (TcpStoreServer server =
                TcpStoreServer.builder().optHost("127.0.0.1").optIoThreads(4).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(waiters);
            CyclicBarrier barrier = new CyclicBarrier(waiters + 1);
            try {
                List<Future<?>> clients = new ArrayList<>();
                for (int w = 0; w < waiters; ++w) {
                    clients.add(
                            pool.submit(
                                    () -> {
                                        try (RawClient c = new RawClient(server.getPort())) {
                                            c.validate();
                                            for (int r = 0; r < rounds; ++r) {
                                                c.u8(6).i64(1).str("/k" + r); // WAIT
                                                barrier.await(30, TimeUnit.SECONDS);
                                                c.u8(12); // CANCEL_WAIT, racing the SET
                                                if (c.readU8() == StoreProtocol.STOP_WAITING) {
                                                    raced.incrementAndGet();
                                                    assertEquals(
                                                            StoreProtocol.WAIT_CANCELED,
                                                            c.readU8());
                                                } else if (c.readWithin(30)
                                                        == StoreProtocol.STOP_WAITING) {
                                                    inverted.incrementAndGet();
                                                }
                                                barrier.await(30, TimeUnit.SECONDS);
                                            }
                                        }
                                        return null;
                                    }));
                }
                try (RawClient setter = new RawClient(server.getPort())) {
                    setter.validate();
                    for (int r = 0; r < rounds; ++r) {
                        barrier.await(30, TimeUnit.SECONDS);
                        setter.u8(1).str("/k" + r).str("v"); // SET wakes every waiter
                        barrier.await(30, TimeUnit.SECONDS);
                    }
                }
                for (Future<?> f : clients) {
                    f.get(60, TimeUnit.SECONDS);
                }
            } finally {
                pool.shutdownNow();
            }
        }
        assertEquals(0, inverted.get(), "WAIT_CANCELED arrived before a STOP_WAITING");
    }
}
