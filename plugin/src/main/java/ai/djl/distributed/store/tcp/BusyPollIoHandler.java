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

import io.netty.channel.IoHandle;
import io.netty.channel.IoHandler;
import io.netty.channel.IoHandlerContext;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.IoRegistration;

import java.util.function.IntSupplier;

/**
 * An adaptive busy-poll around any transport's {@link IoHandler} (io_uring, epoll, NIO): while
 * traffic is recent, the event loop polls for I/O without blocking for up to a short spin window
 * before it lets the transport block. A server answering one request at a time per connection then
 * picks up the next request without the wake-up latency of a blocked thread (several microseconds,
 * most of a loopback round trip), and an idle server still sleeps: the spin only follows events,
 * never runs on its own.
 *
 * <p>A task handed to the loop from another thread (a close, a write) ends the spin at once: the
 * loop's context stops allowing a block as soon as a task is queued, and this handler checks it on
 * every round.
 *
 * <p>One instance belongs to one event loop thread; it is not thread-safe and needs not be. The
 * transport's own handler does the I/O; its registrations are its own, so channels that look their
 * handler up through them see the handler they expect.
 */
final class BusyPollIoHandler implements IoHandler {

    /**
     * Wraps the handlers of {@code transport}, each spinning at most {@code spinNanos}, and only
     * while {@code connections} reports at most {@code maxConnections}.
     */
    static IoHandlerFactory factory(
            IoHandlerFactory transport,
            long spinNanos,
            IntSupplier connections,
            int maxConnections) {
        return new IoHandlerFactory() {
            @Override
            public IoHandler newHandler(io.netty.util.concurrent.ThreadAwareExecutor executor) {
                return new BusyPollIoHandler(
                        transport.newHandler(executor), spinNanos, connections, maxConnections);
            }

            @Override
            public boolean isChangingThreadSupported() {
                return transport.isChangingThreadSupported();
            }
        };
    }

    private final IoHandler transport;
    private final long spinNanos;
    private final IntSupplier connections;
    private final int maxConnections;
    private final PollOnly pollOnly = new PollOnly();
    private long lastEventNanos;

    private BusyPollIoHandler(
            IoHandler transport, long spinNanos, IntSupplier connections, int maxConnections) {
        this.transport = transport;
        this.spinNanos = spinNanos;
        this.connections = connections;
        this.maxConnections = maxConnections;
        lastEventNanos = System.nanoTime() - spinNanos; // no spin before the first event
    }

    /** {@inheritDoc} */
    @Override
    public int run(IoHandlerContext context) {
        long now = System.nanoTime();
        pollOnly.loop = context;
        // connections come and go rarely: counted once per run, not on every round of the spin
        if (now - lastEventNanos < spinNanos && connections.getAsInt() <= maxConnections) {
            while (now - lastEventNanos < spinNanos && context.canBlock()) {
                int ready = transport.run(pollOnly);
                now = System.nanoTime();
                if (ready > 0) {
                    lastEventNanos = now;
                    return ready;
                }
                Thread.onSpinWait();
            }
        }
        int ready = transport.run(context);
        if (ready > 0) {
            lastEventNanos = System.nanoTime();
        }
        return ready;
    }

    /** {@inheritDoc} */
    @Override
    public void initialize() {
        transport.initialize();
    }

    /** {@inheritDoc} */
    @Override
    public void prepareToDestroy() {
        transport.prepareToDestroy();
    }

    /** {@inheritDoc} */
    @Override
    public void destroy() {
        transport.destroy();
    }

    /** {@inheritDoc} */
    @Override
    public IoRegistration register(IoHandle handle) throws Exception {
        return transport.register(handle);
    }

    /** {@inheritDoc} */
    @Override
    public void wakeup() {
        transport.wakeup();
    }

    /** {@inheritDoc} */
    @Override
    public boolean isCompatible(Class<? extends IoHandle> handleType) {
        return transport.isCompatible(handleType);
    }

    /** The loop's context, except that it never lets the transport block. */
    private static final class PollOnly implements IoHandlerContext {
        IoHandlerContext loop;

        @Override
        public boolean canBlock() {
            return false;
        }

        @Override
        public long delayNanos(long currentTimeNanos) {
            return 0;
        }

        @Override
        public long deadlineNanos() {
            return loop.deadlineNanos();
        }

        @Override
        public void reportActiveIoTime(long activeNanos) {
            loop.reportActiveIoTime(activeNanos);
        }

        @Override
        public boolean shouldReportActiveIoTime() {
            return loop.shouldReportActiveIoTime();
        }
    }
}
