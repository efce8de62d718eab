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

import io.netty.channel.SelectStrategy;
import io.netty.channel.SelectStrategyFactory;
import io.netty.util.IntSupplier;

/**
 * An adaptive busy-poll for one event loop: while traffic is recent, the loop polls its selector
 * without blocking for up to a short spin window before it falls back to a blocking wait. A server
 * answering one request at a time per connection then picks up the next request without the wake-up
 * latency of a blocked thread (several microseconds, most of a loopback round trip), and an idle
 * server still sleeps: the spin only follows events, never runs on its own.
 *
 * <p>One instance belongs to one event loop thread; it is not thread-safe and needs not be.
 */
final class BusyPollSelectStrategy implements SelectStrategy {

    /**
     * Creates one strategy per event loop, each spinning at most {@code spinNanos}, and only while
     * {@code connections} reports at most {@code maxConnections}.
     */
    static SelectStrategyFactory factory(
            long spinNanos, IntSupplier connections, int maxConnections) {
        return () -> new BusyPollSelectStrategy(spinNanos, connections, maxConnections);
    }

    private final long spinNanos;
    private final IntSupplier connections;
    private final int maxConnections;
    private long lastEventNanos;

    private BusyPollSelectStrategy(long spinNanos, IntSupplier connections, int maxConnections) {
        this.spinNanos = spinNanos;
        this.connections = connections;
        this.maxConnections = maxConnections;
    }

    /** {@inheritDoc} */
    @Override
    public int calculateStrategy(IntSupplier selectSupplier, boolean hasTasks) throws Exception {
        int ready = selectSupplier.get(); // a poll that never blocks
        if (ready > 0 || hasTasks) {
            lastEventNanos = System.nanoTime();
            return ready;
        }
        // A wake-up from another thread (a task, a close) is an event on the poll too, so the
        // spin never delays it.
        long now = System.nanoTime();
        if (now - lastEventNanos >= spinNanos || connections.get() > maxConnections) {
            return SelectStrategy.SELECT;
        }
        while (now - lastEventNanos < spinNanos) {
            Thread.onSpinWait();
            ready = selectSupplier.get();
            if (ready > 0) {
                lastEventNanos = System.nanoTime();
                return ready;
            }
            now = System.nanoTime();
        }
        return SelectStrategy.SELECT;
    }
}
