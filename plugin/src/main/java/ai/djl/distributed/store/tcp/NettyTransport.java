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
import io.netty.util.concurrent.DefaultThreadFactory;

import java.util.concurrent.TimeUnit;

/**
 * The one place that picks Netty's transport: native epoll on Linux when it loads, NIO otherwise or
 * when the system property {@code ai.djl.distributed.netty.nio} is {@code true}. It also names the
 * event-loop threads and owns the event loops that all store clients of a JVM share.
 */
public final class NettyTransport {

    private static final boolean EPOLL =
            !Boolean.getBoolean("ai.djl.distributed.netty.nio") && Epoll.isAvailable();

    private static final Object CLIENT_LOCK = new Object();
    private static EventLoopGroup clientGroup;
    private static int clientUsers;

    private NettyTransport() {}

    /**
     * Returns whether native epoll is in use.
     *
     * @return {@code true} for epoll, {@code false} for NIO
     */
    public static boolean isEpoll() {
        return EPOLL;
    }

    /**
     * Creates an event loop group of daemon threads.
     *
     * @param threads the number of threads
     * @param name the threads' name prefix
     * @return the group; the caller shuts it down
     */
    public static EventLoopGroup newGroup(int threads, String name) {
        IoHandlerFactory factory = EPOLL ? EpollIoHandler.newFactory() : NioIoHandler.newFactory();
        return new MultiThreadIoEventLoopGroup(
                threads, new DefaultThreadFactory(name, true), factory);
    }

    /**
     * Creates an event loop group of daemon threads that busy-poll for up to {@code spinNanos}
     * after each event before blocking, while there are at most {@code maxConnections} (epoll only;
     * NIO blocks as {@link #newGroup} does). Meant for a server whose few clients each keep one
     * request in flight: it trades a little CPU right after traffic for the wake-up latency of
     * every request.
     *
     * @param threads the number of threads
     * @param name the threads' name prefix
     * @param spinNanos the spin window after the last event, 0 for none
     * @param connections the number of connections now; called from the event loops
     * @param maxConnections the most connections at which the loops spin
     * @return the group; the caller shuts it down
     */
    public static EventLoopGroup newBusyPollGroup(
            int threads,
            String name,
            long spinNanos,
            io.netty.util.IntSupplier connections,
            int maxConnections) {
        if (!EPOLL || spinNanos <= 0) {
            return newGroup(threads, name);
        }
        IoHandlerFactory factory =
                EpollIoHandler.newFactory(
                        0, BusyPollSelectStrategy.factory(spinNanos, connections, maxConnections));
        return new MultiThreadIoEventLoopGroup(
                threads, new DefaultThreadFactory(name, true), factory);
    }

    /**
     * Returns the server channel class of the transport.
     *
     * @return the class
     */
    public static Class<? extends ServerChannel> serverChannel() {
        return EPOLL ? EpollServerSocketChannel.class : NioServerSocketChannel.class;
    }

    /**
     * Returns the client channel class of the transport.
     *
     * @return the class
     */
    public static Class<? extends Channel> clientChannel() {
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
