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
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one place that picks Netty's transport, once per JVM: io_uring on Linux 5.12 and later where
 * the kernel allows it (not refused by a seccomp profile, as Docker's default one does), epoll
 * where not, NIO elsewhere. Before 5.12 the kernel charges io_uring's rings to the user's
 * locked-memory limit (often 64 KiB), which a 1-entry probe ring passes and real rings exceed, so
 * io_uring is taken there only when asked for. The system property {@code
 * ai.djl.distributed.netty.transport} ({@code io_uring}, {@code epoll} or {@code nio}) asks for
 * one; one that cannot load falls back in that order, with a warning; {@code
 * ai.djl.distributed.netty.nio=true}, the older switch, still means {@code nio}. It also names the
 * event-loop threads and owns the event loops that all store clients of a JVM share.
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

    /**
     * The io_uring completion queue of a server's event loops, in entries (16 bytes each). Netty's
     * default, 4096, overflowed when one SET released the WAITs of 9,000 clients at once: the
     * kernel keeps what overflows, but the loop takes a slower path and Netty logs a warning each
     * time.
     */
    static final int SERVER_COMPLETION_QUEUE = 65536;

    private static final Logger logger = LoggerFactory.getLogger(NettyTransport.class);

    private static final String ASKED = asked();
    // null for a property value that names no transport: every use then throws, naming it
    private static final String NAME =
            known(ASKED)
                    ? pick(ASKED, kernelSince5dot12(System.getProperty("os.version", "")))
                    : null;
    private static final boolean URING = "io_uring".equals(NAME);
    private static final boolean EPOLL = "epoll".equals(NAME);

    private static final Object CLIENT_LOCK = new Object();
    private static EventLoopGroup clientGroup;
    private static int clientUsers;

    private NettyTransport() {}

    private static String asked() {
        String asked = System.getProperty(PROPERTY, "");
        return asked.isEmpty() && Boolean.getBoolean("ai.djl.distributed.netty.nio")
                ? "nio"
                : asked;
    }

    private static boolean known(String asked) {
        return asked.isEmpty()
                || "io_uring".equals(asked)
                || "epoll".equals(asked)
                || "nio".equals(asked);
    }

    /**
     * The best transport at or after {@code asked} that loads here; io_uring unasked only on a
     * kernel that does not charge its rings to the locked-memory limit.
     */
    static String pick(String asked, boolean modernKernel) {
        if (!known(asked)) {
            throw unknown(asked);
        }
        if ("io_uring".equals(asked) || (asked.isEmpty() && modernKernel)) {
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

    private static IllegalArgumentException unknown(String asked) {
        return new IllegalArgumentException(
                PROPERTY + ": " + asked + " (expected: io_uring, epoll or nio)");
    }

    /** Whether {@code osVersion} (the system property {@code os.version}) is 5.12 or later. */
    static boolean kernelSince5dot12(String osVersion) {
        return kernelAtLeast(osVersion, 5, 12);
    }

    /**
     * Whether {@code osVersion} (the system property {@code os.version}) is {@code major.minor} or
     * later; {@code false} for a version it cannot read.
     */
    static boolean kernelAtLeast(String osVersion, int major, int minor) {
        Matcher version = Pattern.compile("(\\d+)\\.(\\d+).*").matcher(osVersion);
        if (!version.matches()) {
            return false;
        }
        int actual = Integer.parseInt(version.group(1));
        return actual > major || (actual == major && Integer.parseInt(version.group(2)) >= minor);
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
     * @throws IllegalArgumentException if the system property names no transport
     */
    public static String name() {
        if (NAME == null) {
            throw unknown(ASKED);
        }
        return NAME;
    }

    // With the io_uring completion queue of a server, or Netty's default
    private static IoHandlerFactory ioHandlers(boolean server) {
        name(); // an unknown transport fails here, naming it
        if (URING) {
            IoUringIoHandlerConfig config = new IoUringIoHandlerConfig();
            // a kernel without IORING_SETUP_CQSIZE has no size to set (Netty reports -1)
            if (server && config.getCqSize() > 0) {
                config.setCqSize(Math.max(SERVER_COMPLETION_QUEUE, config.getCqSize()));
            }
            return IoUringIoHandler.newFactory(config);
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
                threads, new DefaultThreadFactory(name, true), ioHandlers(false));
    }

    /**
     * Creates the event loops of a server: daemon threads with a large io_uring completion queue
     * ({@link #SERVER_COMPLETION_QUEUE}) that busy-poll for up to {@code spinNanos} after each
     * event before blocking, while there are at most {@code maxConnections} (io_uring and epoll;
     * NIO blocks at once). The spin is for a server whose few clients each keep one request in
     * flight: it trades a little CPU right after traffic for the wake-up latency of every request.
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
            java.util.function.IntSupplier connections,
            int maxConnections) {
        IoHandlerFactory factory = ioHandlers(true);
        // NIO's selectNow() writes a wake-up after any cross-thread wake-up, on every poll: its
        // spin would cost system calls, so NIO, the last resort, blocks at once
        if (spinNanos > 0 && (URING || EPOLL)) {
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
        name();
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
        name();
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
