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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.HashStore;
import ai.djl.distributed.store.Store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The rendezvous over a store that, as PyTorch's classic TCPStore server (torchrun's agent store in
 * builds without libuv), wakes a waiter on a set, add or append but not on a compare-and-set: a
 * healthy step ends at once, and a rank that gives up fails its waiting peers at once.
 */
@Timeout(120)
class SetupRendezvousClassicServerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    /** Half the timeout: a step that waited for it cannot pass, a loaded machine still does. */
    private static final long PROMPT_MS = TIMEOUT.toMillis() / 2;

    @Test
    void everyRankDoneEndsAtOnce() throws Exception {
        try (HashStore inner = new HashStore()) {
            Store store = new ClassicServerStore(inner);
            CompletableFuture<Long> first =
                    async(
                            () ->
                                    SetupRendezvous.TCP.awaitAllDone(
                                            store, 2, Deadline.after(TIMEOUT)));
            awaitWaiting(inner, "tcp/connected");
            long ms =
                    time(() -> SetupRendezvous.TCP.awaitAllDone(store, 2, Deadline.after(TIMEOUT)));
            assertTrue(ms < PROMPT_MS, "the last rank took " + ms + " ms");
            long waited = first.get(60, TimeUnit.SECONDS);
            assertTrue(waited < PROMPT_MS, "the first rank took " + waited + " ms");
        }
    }

    @Test
    void aRankThatGivesUpFailsItsWaitingPeerAtOnce() throws Exception {
        try (HashStore inner = new HashStore()) {
            Store store = new ClassicServerStore(inner);
            CompletableFuture<Long> waiting =
                    async(
                            () ->
                                    SetupRendezvous.SHM.awaitAllDone(
                                            store, 2, Deadline.after(TIMEOUT)));
            awaitWaiting(inner, "shm/mapped");
            SetupRendezvous.SHM.giveUp(
                    store, 1, true, new CommunicationException("rank 1 broke", -1));
            ExecutionException e =
                    assertThrows(ExecutionException.class, () -> waiting.get(60, TimeUnit.SECONDS));
            CommunicationException ce = (CommunicationException) e.getCause();
            assertEquals(1, ce.getPeerRank(), ce.getMessage());
            assertTrue(ce.getMessage().contains("rank 1 broke"), ce.getMessage());
            assertTrue(
                    !ce.getMessage().contains("within"),
                    "waited out the timeout: " + ce.getMessage());
        }
    }

    private static void awaitWaiting(Store inner, String counter) throws InterruptedException {
        long until = System.nanoTime() + TIMEOUT.toNanos();
        while (!inner.check(List.of(counter))) {
            assertTrue(System.nanoTime() < until, counter + " never counted");
            Thread.sleep(5);
        }
        Thread.sleep(100); // the first rank is now in its wait
    }

    private static CompletableFuture<Long> async(Runnable step) {
        return CompletableFuture.supplyAsync(() -> time(step));
    }

    private static long time(Runnable step) {
        long start = System.nanoTime();
        step.run();
        return (System.nanoTime() - start) / 1_000_000;
    }

    /**
     * A store whose waits are woken as by PyTorch's classic server: a waiter waits on a shadow key
     * that set, add and append write after the key, and compare-and-set does not.
     */
    private static final class ClassicServerStore implements Store {

        private final Store inner;

        ClassicServerStore(Store inner) {
            this.inner = inner;
        }

        private static String wake(String key) {
            return "wake/" + key;
        }

        @Override
        public void set(String key, byte[] value) {
            inner.set(key, value);
            inner.set(wake(key), new byte[0]);
        }

        @Override
        public byte[] get(String key) {
            waitFor(List.of(key));
            return inner.get(key);
        }

        @Override
        public long add(String key, long delta) {
            long v = inner.add(key, delta);
            inner.set(wake(key), new byte[0]);
            return v;
        }

        @Override
        public byte[] compareSet(String key, byte[] expected, byte[] desired) {
            return inner.compareSet(key, expected, desired); // wakes nobody
        }

        @Override
        public boolean deleteKey(String key) {
            return inner.deleteKey(key);
        }

        @Override
        public boolean check(List<String> keys) {
            return inner.check(keys);
        }

        @Override
        public void waitFor(List<String> keys, Duration timeout) {
            for (String key : keys) {
                if (!inner.check(List.of(key))) {
                    inner.waitFor(List.of(wake(key)), timeout);
                }
            }
        }

        @Override
        public long numKeys() {
            return inner.numKeys();
        }

        @Override
        public Duration getTimeout() {
            return inner.getTimeout();
        }

        @Override
        public void setTimeout(Duration timeout) {
            inner.setTimeout(timeout);
        }

        @Override
        public void close() {}
    }
}
