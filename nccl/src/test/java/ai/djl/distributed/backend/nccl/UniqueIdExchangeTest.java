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
package ai.djl.distributed.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.DistributedException;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreTimeoutException;
import ai.djl.distributed.store.tcp.TcpStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

@Timeout(60)
class UniqueIdExchangeTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private static byte[] randomId(long seed) {
        byte[] id = new byte[128];
        new Random(seed).nextBytes(id);
        return id;
    }

    /** Each rank's ids for: two group communicators, then the pair (1, 2). */
    private static List<List<byte[]>> exchangeOnRanks(List<Store> worlds) throws Exception {
        int size = worlds.size();
        AtomicInteger made = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(size);
        try {
            List<Future<List<byte[]>>> futures = new ArrayList<>();
            for (int r = 0; r < size; r++) {
                int rank = r;
                // What the process group hands the world's GPU backend (as PyTorch's).
                Store backendStore =
                        new PrefixStore(
                                "cuda/",
                                new PrefixStore(
                                        "0/", new PrefixStore("default_pg", worlds.get(r))));
                futures.add(
                        pool.submit(
                                () -> {
                                    UniqueIdExchange x =
                                            new UniqueIdExchange(backendStore, rank, TIMEOUT);
                                    Supplier<byte[]> make =
                                            () -> randomId(100 + made.incrementAndGet());
                                    List<byte[]> ids = new ArrayList<>();
                                    ids.add(x.shareForGroup(make));
                                    ids.add(x.shareForGroup(make));
                                    if (rank == 1) {
                                        ids.add(x.shareForPair(2, make));
                                    } else if (rank == 2) {
                                        ids.add(x.shareForPair(1, make));
                                    }
                                    assertEquals(2, x.count());
                                    return ids;
                                }));
            }
            List<List<byte[]>> out = new ArrayList<>();
            for (Future<List<byte[]>> f : futures) {
                out.add(f.get(TIMEOUT.toSeconds(), TimeUnit.SECONDS));
            }
            // Two group ids made on rank 0, one pair id on rank 1: nowhere else.
            assertEquals(3, made.get());
            return out;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void assertSharedAndKeyedAsPyTorch(List<List<byte[]>> ids, Store raw) {
        for (int i = 0; i < 2; i++) {
            for (List<byte[]> rank : ids) {
                assertArrayEquals(ids.get(0).get(i), rank.get(i), "group id " + i);
            }
            // PyTorch's prefixes end in "/", and PrefixStore adds one: hence the double slashes.
            assertArrayEquals(ids.get(0).get(i), raw.get("default_pg/0//cuda//" + i));
        }
        assertTrue(!java.util.Arrays.equals(ids.get(0).get(0), ids.get(0).get(1)));
        assertArrayEquals(ids.get(1).get(2), ids.get(2).get(2));
        assertArrayEquals(ids.get(1).get(2), raw.get("default_pg/0//cuda//1:2"));
    }

    @Test
    void idsMeetUnderPyTorchsKeysInAHashStore() throws Exception {
        HashStore store = new HashStore();
        List<List<byte[]>> ids = exchangeOnRanks(List.of(store, store, store));
        assertSharedAndKeyedAsPyTorch(ids, store);
    }

    @Test
    void idsMeetUnderPyTorchsKeysInATcpStore() throws Exception {
        try (TcpStore server =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(0)
                                .optServer(true)
                                .optWorldSize(1)
                                .optTimeout(TIMEOUT)
                                .build();
                TcpStore one = client(server);
                TcpStore two = client(server)) {
            List<List<byte[]>> ids = exchangeOnRanks(List.of(server, one, two));
            assertSharedAndKeyedAsPyTorch(ids, server);
        }
    }

    private static TcpStore client(TcpStore server) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(server.getPort())
                .optTimeout(TIMEOUT)
                .build();
    }

    @Test
    void pairKeysPutTheLowerRankFirst() {
        assertEquals("1:3", UniqueIdExchange.pairKey(3, 1));
        assertEquals("1:3", UniqueIdExchange.pairKey(1, 3));
        assertEquals("0:0", UniqueIdExchange.pairKey(0, 0));
    }

    @Test
    void whatIsNotAnIdIsRefusedNamingTheKey() {
        HashStore store = new HashStore();
        store.set("0", new byte[16]);
        UniqueIdExchange x = new UniqueIdExchange(store, 1, TIMEOUT);
        DistributedException e =
                assertThrows(DistributedException.class, () -> x.shareForGroup(() -> null));
        assertTrue(e.getMessage().contains("'0'"), e.getMessage());
        assertTrue(e.getMessage().contains("16 bytes"), e.getMessage());
        UniqueIdExchange root = new UniqueIdExchange(new HashStore(), 0, TIMEOUT);
        assertThrows(DistributedException.class, () -> root.shareForGroup(() -> new byte[3]));
    }

    @Test
    void aRootThatNeverPublishesTimesOut() {
        UniqueIdExchange x = new UniqueIdExchange(new HashStore(), 2, Duration.ofMillis(200));
        StoreTimeoutException e =
                assertThrows(StoreTimeoutException.class, () -> x.shareForGroup(() -> null));
        assertTrue(e.getMessage().contains("0"), e.getMessage());
    }
}
