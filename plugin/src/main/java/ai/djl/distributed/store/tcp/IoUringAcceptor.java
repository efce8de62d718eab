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
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.IoEventLoop;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.concurrent.EventExecutor;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Consumer;

/**
 * The handler that, in a listener's pipeline, takes each accepted connection before its channel is
 * registered anywhere, sets the channel's options, and has one of the loops serve it as an {@link
 * IoUringConnection}. It also holds what those connections share: the keys, the limits, the read
 * timeout, the set of open connections, each loop's {@link KeyCache}, and the initializer that
 * builds a channel's pipeline when a connection is handed back. Runs on the listener's event loop;
 * its fields are read by the connections' loops and never change (each key cache's contents change,
 * on its own loop only).
 */
@ChannelHandler.Sharable
final class IoUringAcceptor extends ChannelInboundHandlerAdapter {

    private static final Logger logger = LoggerFactory.getLogger(IoUringAcceptor.class);

    final EventLoopGroup loops;
    final Consumer<Channel> configure;
    final ChannelHandler initializer;
    final StoreState state;
    final int maxKeyBytes;
    final long maxRequestBytes;
    final Set<IoUringConnection> open;
    final long readTimeoutNanos;
    private final Map<EventExecutor, KeyCache> keys = new IdentityHashMap<>(); // one per loop

    /**
     * Creates the handler of one listener.
     *
     * @param loops the event loops that serve connections, io_uring's
     * @param configure applies a connection's socket and channel options
     * @param initializer builds a handed-back channel's pipeline
     * @param state the keys served
     * @param maxKeyBytes the largest key served here
     * @param maxRequestBytes the most key and value bytes of a request served here
     * @param open where the connections held here are kept, for {@link IoUringConnection#closeAll}
     * @param readTimeout how long a request cut by the end of the read buffer may wait for its rest
     */
    IoUringAcceptor(
            EventLoopGroup loops,
            Consumer<Channel> configure,
            ChannelHandler initializer,
            StoreState state,
            int maxKeyBytes,
            long maxRequestBytes,
            Set<IoUringConnection> open,
            Duration readTimeout) {
        this.loops = loops;
        this.configure = configure;
        this.initializer = initializer;
        this.state = state;
        this.maxKeyBytes = maxKeyBytes;
        this.maxRequestBytes = maxRequestBytes;
        this.open = open;
        this.readTimeoutNanos = readTimeout.toNanos();
        for (EventExecutor loop : loops) {
            keys.put(loop, new KeyCache());
        }
    }

    /** {@inheritDoc} */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        if (!(msg instanceof IoUringSocketChannel)) {
            ctx.fireChannelRead(msg); // not an io_uring connection: the bootstrap's
            return;
        }
        IoUringSocketChannel accepted = (IoUringSocketChannel) msg;
        try {
            configure.accept(accepted);
            accepted.config().setAutoRead(false); // until the bytes read here are passed on
        } catch (RuntimeException e) {
            logger.debug("TcpStore server: configuring {} failed", accepted, e);
            accepted.unsafe().closeForcibly();
            return;
        }
        try {
            IoEventLoop loop = (IoEventLoop) loops.next();
            new IoUringConnection(accepted, loop, this, keys.get(loop)).start();
        } catch (RejectedExecutionException e) { // the server is closing
            accepted.unsafe().closeForcibly();
        }
    }
}
