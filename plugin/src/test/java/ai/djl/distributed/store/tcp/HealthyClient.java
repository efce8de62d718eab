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

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A well-behaved client doing set, get and add in a loop on its own thread while a test attacks the
 * server; {@link #finish()} stops it and rethrows the first failure, so every one of its operations
 * must have succeeded.
 */
final class HealthyClient implements AutoCloseable {

    private final TcpStore store;
    private final Thread thread;
    private final AtomicBoolean stop = new AtomicBoolean();
    private volatile Throwable failure;
    private volatile long rounds;
    private volatile long slowestNanos;

    HealthyClient(int port) {
        store =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(port)
                        .optTimeout(Duration.ofSeconds(20))
                        .build();
        thread = new Thread(this::run, "healthy-client");
        thread.setDaemon(true);
        thread.start();
    }

    private void run() {
        try {
            for (long i = 1; !stop.get(); ++i) {
                long start = System.nanoTime();
                String value = "v" + i;
                store.set("healthy/" + (i % 8), value);
                String got = store.getString("healthy/" + (i % 8));
                if (!got.equals(value)) {
                    throw new AssertionError("get returned " + got + ", expected " + value);
                }
                long count = store.add("healthy/count", 1);
                if (count != i) {
                    throw new AssertionError("add returned " + count + ", expected " + i);
                }
                slowestNanos = Math.max(slowestNanos, System.nanoTime() - start);
                rounds = i;
            }
        } catch (Throwable t) { // rethrown by finish()
            failure = t;
        }
    }

    /**
     * Stops the loop and checks it: no operation failed, and it made progress.
     *
     * @return a summary of the rounds and the slowest one
     * @throws AssertionError if an operation failed or none ran
     */
    String finish() {
        close();
        if (failure != null) {
            throw new AssertionError("the healthy client failed", failure);
        }
        if (thread.isAlive() || rounds == 0) {
            throw new AssertionError("the healthy client made " + rounds + " rounds");
        }
        return rounds
                + " rounds of set/get/add, slowest "
                + TimeUnit.NANOSECONDS.toMillis(slowestNanos)
                + " ms";
    }

    /** Stops the loop, waiting a bounded time for the round in progress, and closes the store. */
    @Override
    public void close() {
        stop.set(true);
        try {
            thread.join(TimeUnit.SECONDS.toMillis(60));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        store.close();
    }
}
