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

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoHandlerFactory;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollIoHandler;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.channel.uring.IoUring;
import io.netty.channel.uring.IoUringIoHandler;
import io.netty.channel.uring.IoUringIoHandlerConfig;
import io.netty.channel.uring.IoUringServerSocketChannel;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.TimeUnit;

/**
 * The one place that picks Netty's transport, once per JVM: io_uring on Linux where the kernel
 * allows it (5.10 and later, and not refused by a seccomp profile, as Docker's default one does),
 * epoll where io_uring is not there, NIO elsewhere. The system property {@code
 * ai.djl.distributed.netty.transport} ({@code io_uring}, {@code epoll} or {@code nio}) asks for
 * one; one that cannot load falls back in that order, with a warning. It also names the event-loop
 * threads and owns the event loops that all store clients of a JVM share.
 *
 * <p>Why io_uring first: a store request is a few bytes each way, so the server's time goes to
 * system calls, and io_uring submits a loop's reads and writes together. In one run here the store
 * server served 1.23 times epoll's requests per second at 64 connections, 1.06 times at 16 and 1.13
 * times under PyTorch's 16-process Python load; at one connection 0.88 times, twice PyTorch's
 * server either way (docs/PERFORMANCE.md).
 */
public final class NettyTransport {

    /** The system property that asks for a transport. */
    public static final String PROPERTY = "ai.djl.distributed.netty.transport";

    private static final Logger logger = LoggerFactory.getLogger(NettyTransport.class);

    private static final String NAME = pick(System.getProperty(PROPERTY, ""));
    private static final boolean URING = "io_uring".equals(NAME);
    private static final boolean EPOLL = "epoll".equals(NAME);

    private static final Object CLIENT_LOCK = new Object();
    private static EventLoopGroup clientGroup;
    private static int clientUsers;

    private NettyTransport() {}

    /** The best transport at or after {@code asked} that loads here. */
    static String pick(String asked) {
        if (!asked.isEmpty()
                && !"io_uring".equals(asked)
                && !"epoll".equals(asked)
                && !"nio".equals(asked)) {
            throw new IllegalArgumentException(
                    PROPERTY + ": " + asked + " (expected: io_uring, epoll or nio)");
        }
        if (asked.isEmpty() || "io_uring".equals(asked)) {
            if (IoUring.isAvailable()) {
                return "io_uring";
            }
            unavailable(asked, "io_uring", IoUring.unavailabilityCause());
        }
        if (!"nio".equals(asked)) {
            if (Epoll.isAvailable()) {
                return "epoll";
            }
            unavailable(asked, "epoll", Epoll.unavailabilityCause());
        }
        return "nio";
    }

    private static void unavailable(String asked, String transport, Throwable cause) {
        if (asked.equals(transport)) {
            logger.warn("{}={} cannot load here, falling back: {}", PROPERTY, asked, cause);
        } else {
            logger.debug("Netty transport {} cannot load here: {}", transport, cause);
        }
    }

    /**
     * Returns the transport in use.
     *
     * @return {@code io_uring}, {@code epoll} or {@code nio}
     */
    public static String name() {
        return NAME;
    }

    /**
     * The io_uring completion queue of a server's event loops, in entries (16 bytes each). Netty's
     * default, 4096, overflowed when one SET released the WAITs of 9,000 clients at once: the
     * kernel keeps what overflows, but the loop takes a slower path and Netty logs a warning each
     * time.
     */
    static final int SERVER_COMPLETION_QUEUE = 65536;

    private static final int DEFAULT_COMPLETION_QUEUE = new IoUringIoHandlerConfig().getCqSize();

    private static IoHandlerFactory ioHandlers(int completionQueue) {
        if (URING) {
            return IoUringIoHandler.newFactory(
                    new IoUringIoHandlerConfig().setCqSize(completionQueue));
        }
        return EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
    }

    /**
     * Creates an event loop group of daemon threads.
     *
     * @param threads the number of threads
     * @param name the threads' name prefix
     * @return the group; the caller shuts it down
     */
    public static EventLoopGroup newGroup(int threads, String name) {
        return new MultiThreadIoEventLoopGroup(
                threads,
                new DefaultThreadFactory(name, true),
                ioHandlers(DEFAULT_COMPLETION_QUEUE));
    }

    /**
     * Creates the event loops of a server: daemon threads with a large io_uring completion queue
     * ({@link #SERVER_COMPLETION_QUEUE}) that busy-poll for up to {@code spinNanos} after each
     * event before blocking, while there are at most {@code maxConnections}. The spin is for a
     * server whose few clients each keep one request in flight: it trades a little CPU right after
     * traffic for the wake-up latency of every request.
     *
     * @param threads the number of threads
     * @param name the threads' name prefix
     * @param spinNanos the spin window after the last event, 0 for none
     * @param connections the number of connections now; called from the event loops
     * @param maxConnections the most connections at which the loops spin
     * @return the group; the caller shuts it down
     */
    public static EventLoopGroup newServerGroup(
            int threads,
            String name,
            long spinNanos,
            io.netty.util.IntSupplier connections,
            int maxConnections) {
        IoHandlerFactory factory = ioHandlers(SERVER_COMPLETION_QUEUE);
        if (spinNanos > 0) {
            factory = BusyPollIoHandler.factory(factory, spinNanos, connections, maxConnections);
        }
        return new MultiThreadIoEventLoopGroup(
                threads, new DefaultThreadFactory(name, true), factory);
    }

    /**
     * Returns the server channel class of the transport.
     *
     * @return the class
     */
    public static Class<? extends ServerChannel> serverChannel() {
        if (URING) {
            return IoUringServerSocketChannel.class;
        }
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /**
     * Returns the client channel class of the transport.
     *
     * @return the class
     */
    public static Class<? extends Channel> clientChannel() {
        if (URING) {
            return IoUringSocketChannel.class;
        }
        return EPOLL ? EpollSocketChannel.class : NioSocketChannel.class;
    }

    /**
     * Takes a reference to the event loops shared by the store clients of this JVM, starting them
     * if needed. Every call is matched by one {@link #releaseClientGroup()}.
     *
     * @return the shared group
     */
    static EventLoopGroup acquireClientGroup() {
        synchronized (CLIENT_LOCK) {
            if (clientUsers++ == 0) {
                int threads = Math.max(1, Math.min(2, Runtime.getRuntime().availableProcessors()));
                clientGroup = newGroup(threads, "djl-store-client");
            }
            return clientGroup;
        }
    }

    /** Drops a reference taken by {@link #acquireClientGroup()}; the last one stops the loops. */
    static void releaseClientGroup() {
        EventLoopGroup toStop = null;
        synchronized (CLIENT_LOCK) {
            if (--clientUsers == 0) {
                toStop = clientGroup;
                clientGroup = null;
            }
        }
        if (toStop != null) {
            toStop.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
    }
}
