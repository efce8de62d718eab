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

import ai.djl.distributed.store.StoreException;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Serves one client connection (whose decoder has checked the VALIDATE handshake): applies each
 * query to the shared {@link StoreState} and writes the reply. Queries come decoded from the {@link
 * StoreRequestDecoder} before it, or straight from the read buffer through {@link InPlaceRequests},
 * which calls the per-query methods here; both run on the connection's event loop, so nothing here
 * needs a lock. The small replies of one read burst are gathered in one buffer, written and flushed
 * once when the burst ends: one allocation and one system call for all of them. Anything malformed
 * closes this connection alone, with a logged reason.
 */
final class StoreServerHandler extends ChannelInboundHandlerAdapter {

    private static final Logger logger = LoggerFactory.getLogger(StoreServerHandler.class);
    private static final byte[] EMPTY = new byte[0];

    /**
     * Past this many gathered reply bytes, the burst's replies go to the channel before the next
     * request is served, so its write watermark counts them: pipelined small replies are held back
     * like large ones.
     */
    static final int MAX_GATHERED = 64 * 1024;

    // how often a MULTI_GET or LIST waiting for the reply budget tries again
    private static final long BUDGET_RETRY_MILLIS = 10;

    private final StoreState state;
    // the requests held back, in order; a request waiting for the reply budget goes back first
    private final Deque<StoreRequest> backlog = new ArrayDeque<>();
    private final long maxReplyBytes; // the request limit: bounds every reply and stored value
    private final MemoryBudget replyBudget; // the server's, for MULTI_GET and LIST replies unsent
    private final long budgetWaitNanos; // how long a reply may wait for that budget to free
    private Waiter waiter;
    private ByteBuf replies; // the replies of this read burst not yet handed to the pipeline
    // a CANCEL_WAIT's reply is queued on the loop: the requests after it wait in the backlog
    private boolean cancelReplyQueued;
    // the request at the backlog's head waits for the reply budget: since when (else -1), and
    // whether its next try is scheduled
    private long budgetWaitSince = -1;
    private boolean budgetRetryScheduled;

    StoreServerHandler(
            StoreState state, long maxReplyBytes, MemoryBudget replyBudget, Duration budgetWait) {
        this.state = state;
        this.maxReplyBytes = maxReplyBytes;
        this.replyBudget = replyBudget;
        this.budgetWaitNanos = budgetWait.toNanos();
    }

    /** {@inheritDoc} */
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        StoreRequest req = (StoreRequest) msg;
        if (!isReady(ctx)) {
            // The client is not reading its replies: hold its requests (already decoded, so their
            // size is bounded by what it sent) and stop reading until the replies drain.
            backlog.add(req);
            ctx.channel().config().setAutoRead(false);
            return;
        }
        handle(ctx, req);
    }

    /** {@inheritDoc} */
    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        serveBacklog(ctx);
        ctx.fireChannelWritabilityChanged();
    }

    // Serves the requests held back, in order, while nothing holds them; then reads on.
    private void serveBacklog(ChannelHandlerContext ctx) {
        while (ctx.channel().isWritable()
                && !cancelReplyQueued
                && !budgetRetryScheduled
                && !backlog.isEmpty()
                && ctx.channel().isActive()) {
            handle(ctx, backlog.poll());
            handOver(ctx);
            ctx.flush();
        }
        if (backlog.isEmpty() && !cancelReplyQueued && ctx.channel().isWritable()) {
            ctx.channel().config().setAutoRead(true);
        }
    }

    private void handle(ChannelHandlerContext ctx, StoreRequest req) {
        try {
            serve(ctx, req);
        } catch (StoreException e) {
            closeWith(ctx, e.getMessage());
        }
    }

    private void serve(ChannelHandlerContext ctx, StoreRequest req) {
        switch (req.opcode()) {
            case VALIDATE:
                return; // the decoder checked the handshake
            case SET:
                set(req.key(), req.value());
                return;
            case COMPARE_SET:
                byte[] current =
                        state.compareSet(req.key(), req.values().get(0), req.values().get(1));
                bytes(ctx, current);
                return;
            case GET:
                get(ctx, req.key());
                return;
            case ADD:
                add(ctx, req.key(), req.number());
                return;
            case CHECK:
                check(ctx, req.keys());
                return;
            case WAIT:
                await(ctx, req.keys());
                return;
            case GETNUMKEYS:
                reply(ctx, 8).writeLongLE(state.numKeys());
                return;
            case DELETE_KEY:
                reply(ctx, 8).writeLongLE(state.delete(req.key()) ? 1 : 0);
                return;
            case APPEND:
                // a value no larger than a request: every GET of it fits a reply
                state.append(req.key(), req.value(), maxReplyBytes);
                return;
            case MULTI_GET:
                if (!multiGet(ctx, req.keys())) {
                    awaitReplyBudget(ctx, req);
                }
                return;
            case MULTI_SET:
                state.multiSet(req.keys(), req.values());
                return;
            case CANCEL_WAIT:
                cancelWait(ctx);
                return;
            case PING:
                reply(ctx, 4).writeIntLE((int) req.number());
                return;
            case QUEUE_PUSH:
                state.queuePush(req.key(), req.value());
                return;
            case QUEUE_POP:
                queuePop(ctx, req.key());
                return;
            case QUEUE_LEN:
                reply(ctx, 8).writeLongLE(state.queueLength(req.key()));
                return;
            case LIST:
                if (!list(ctx)) {
                    awaitReplyBudget(ctx, req);
                }
                return;
            default:
                throw new AssertionError(req.opcode());
        }
    }

    /** Stores a SET's value (no reply). */
    void set(String key, byte[] value) {
        state.set(key, value);
    }

    /** Replies to a GET: the value, or an empty one for a missing key (PyTorch's server's way). */
    void get(ChannelHandlerContext ctx, String key) {
        byte[] value = state.get(key);
        bytes(ctx, value == null ? EMPTY : value);
    }

    /** Replies to an ADD with the counter's new value. */
    void add(ChannelHandlerContext ctx, String key, long delta) {
        reply(ctx, 8).writeLongLE(state.add(key, delta));
    }

    /** Replies to a CHECK: whether every key exists. */
    void check(ChannelHandlerContext ctx, List<String> keys) {
        int ready = state.check(keys) ? StoreProtocol.CHECK_READY : StoreProtocol.CHECK_NOT_READY;
        reply(ctx, 1).writeByte(ready);
    }

    /** Registers a WAIT, or replies STOP_WAITING at once if every key exists. */
    void await(ChannelHandlerContext ctx, List<String> keys) {
        if (waiter == null) {
            waiter = Waiter.of(ctx.channel());
        }
        // a STOP_WAITING queued by another connection's write must follow this connection's
        // earlier replies
        handOver(ctx);
        if (state.await(waiter, keys)) {
            reply(ctx, 1).writeByte(StoreProtocol.STOP_WAITING);
        }
    }

    /**
     * Tells whether a request may be served the moment it is read: nothing is held back for a
     * client that is not reading its replies, whose replies (gathered ones included) have passed
     * the channel's write watermark.
     */
    boolean isReady(ChannelHandlerContext ctx) {
        if (replies != null && replies.writerIndex() >= MAX_GATHERED) {
            handOver(ctx); // now counted by the channel's watermark
        }
        return !cancelReplyQueued && backlog.isEmpty() && ctx.channel().isWritable();
    }

    /** Closes the connection after a request the store refused, with the reason logged. */
    void fail(ChannelHandlerContext ctx, StoreException e) {
        closeWith(ctx, e.getMessage());
    }

    private void cancelWait(ChannelHandlerContext ctx) {
        if (waiter != null) {
            state.cancel(waiter);
        }
        handOver(ctx);
        // Queued behind any STOP_WAITING another event loop has already queued for us, so the
        // client reads STOP_WAITING first, as PyTorch's client expects. The requests after it wait
        // for it, so that their replies follow it, as they follow it on PyTorch's server.
        ByteBuf reply = ctx.alloc().ioBuffer(1).writeByte(StoreProtocol.WAIT_CANCELED);
        cancelReplyQueued = true;
        ctx.channel()
                .eventLoop()
                .execute(
                        () -> {
                            ctx.writeAndFlush(reply);
                            cancelReplyQueued = false;
                            serveBacklog(ctx);
                        });
    }

    // One key named many times could otherwise make one reply of many gigabytes.
    private boolean multiGet(ChannelHandlerContext ctx, List<String> keys) {
        List<byte[]> values = state.multiGet(keys);
        long size = 0;
        for (byte[] v : values) {
            size += 8 + (v == null ? 0 : v.length);
        }
        if (size > maxReplyBytes) {
            throw new StoreException(
                    "MULTI_GET reply of " + size + " bytes exceeds the limit of " + maxReplyBytes);
        }
        handOver(ctx); // the replies before it are not part of its claim
        if (!claimReply(size)) {
            return false;
        }
        try {
            for (byte[] v : values) {
                bytes(ctx, v == null ? EMPTY : v);
            }
        } catch (RuntimeException | Error e) { // what it wrote goes with the connection
            replyBudget.release(size);
            throw e;
        }
        ByteBuf last = replies != null ? replies : Unpooled.EMPTY_BUFFER;
        replies = null;
        writeClaimed(ctx, last, size);
        return true;
    }

    // A request of a few bytes per key can ask for a reply of many more (one key named 100,000
    // times): the replies built for clients that have not read them are bounded together.
    private boolean claimReply(long size) {
        if (!replyBudget.tryClaim(size)) {
            return false;
        }
        budgetWaitSince = -1;
        return true;
    }

    // The budget is held by replies others have not read yet: this request waits at the head of
    // the backlog, its connection unread, and tries again shortly, rather than its connection
    // being closed for what other clients hold. Past the read timeout, it is closed after all.
    private void awaitReplyBudget(ChannelHandlerContext ctx, StoreRequest req) {
        long now = System.nanoTime();
        if (budgetWaitSince < 0) {
            budgetWaitSince = now;
        } else if (now - budgetWaitSince >= budgetWaitNanos) {
            throw new StoreException(
                    req.opcode()
                            + " reply waited "
                            + TimeUnit.NANOSECONDS.toMillis(now - budgetWaitSince)
                            + " ms for the server's reply budget of "
                            + replyBudget.limit()
                            + " bytes, held by replies other clients have not read ("
                            + replyBudget.held()
                            + " bytes; read timeout "
                            + TimeUnit.NANOSECONDS.toMillis(budgetWaitNanos)
                            + " ms)");
        }
        backlog.addFirst(req);
        ctx.channel().config().setAutoRead(false);
        budgetRetryScheduled = true;
        ctx.executor()
                .schedule(
                        () -> {
                            budgetRetryScheduled = false;
                            serveBacklog(ctx);
                        },
                        BUDGET_RETRY_MILLIS,
                        TimeUnit.MILLISECONDS);
    }

    // Writes a claimed reply's last part with a promise that gives the claim back once it is sent
    // or its connection fails: writes complete in order, so all of the reply is then.
    private void writeClaimed(ChannelHandlerContext ctx, ByteBuf last, long size) {
        ctx.write(last).addListener(f -> replyBudget.release(size));
    }

    private void queuePop(ChannelHandlerContext ctx, String key) {
        long length = state.queueLength(key);
        byte[] value = length > 0 ? state.queuePop(key) : null;
        if (value == null) {
            reply(ctx, 8).writeLongLE(0);
            return;
        }
        reply(ctx, 8).writeLongLE(length);
        bytes(ctx, value);
    }

    // Every key of the store, in one reply: bounded like any other.
    private boolean list(ChannelHandlerContext ctx) {
        List<String> keys = state.list();
        long size = 8;
        for (String key : keys) {
            size += 8 + key.length();
        }
        if (size > maxReplyBytes) {
            throw new StoreException(
                    "LIST reply of " + size + " bytes exceeds the limit of " + maxReplyBytes);
        }
        handOver(ctx);
        if (!claimReply(size)) {
            return false;
        }
        ByteBuf out;
        try {
            out = ctx.alloc().ioBuffer((int) size);
        } catch (RuntimeException | Error e) {
            replyBudget.release(size);
            throw e;
        }
        out.writeLongLE(keys.size());
        for (String key : keys) {
            out.writeLongLE(key.length());
            out.writeCharSequence(key, StandardCharsets.ISO_8859_1);
        }
        writeClaimed(ctx, out, size);
        return true;
    }

    // Stored values are never mutated, so large ones are sent without a copy.
    private void bytes(ChannelHandlerContext ctx, byte[] value) {
        if (value.length <= 256) {
            reply(ctx, 8 + value.length).writeLongLE(value.length).writeBytes(value);
            return;
        }
        handOver(ctx);
        ByteBuf header = ctx.alloc().ioBuffer(8).writeLongLE(value.length);
        ctx.write(Unpooled.wrappedBuffer(header, Unpooled.wrappedBuffer(value)));
    }

    // The burst's reply buffer, with room for n more bytes.
    private ByteBuf reply(ChannelHandlerContext ctx, int n) {
        if (replies == null) {
            replies = ctx.alloc().ioBuffer(Math.max(256, n));
        }
        return replies.ensureWritable(n);
    }

    // Hands the gathered replies to the pipeline (in order, ahead of anything written after). No
    // promise per write: a failed write reaches exceptionCaught, which closes the connection.
    private void handOver(ChannelHandlerContext ctx) {
        if (replies != null) {
            ByteBuf out = replies;
            replies = null;
            ctx.write(out, ctx.voidPromise());
        }
    }

    /** {@inheritDoc} */
    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        handOver(ctx);
        ctx.flush();
    }

    /** {@inheritDoc} */
    @Override
    public void handlerRemoved(ChannelHandlerContext ctx) {
        if (replies != null) {
            replies.release();
            replies = null;
        }
    }

    /** {@inheritDoc} */
    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (waiter != null) {
            state.cancel(waiter);
        }
        ctx.fireChannelInactive();
    }

    /** {@inheritDoc} */
    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (cause instanceof java.io.IOException || StoreTls.tlsCause(cause) != null) {
            // a client that vanished (reset, broken pipe), or failed TLS (logged where it failed):
            // nothing to report above debug
            logger.debug(
                    "TcpStore server: connection from {} failed",
                    ctx.channel().remoteAddress(),
                    cause);
            ctx.close();
            return;
        }
        closeWith(
                ctx, cause instanceof StoreCodecException ? cause.getMessage() : cause.toString());
    }

    private void closeWith(ChannelHandlerContext ctx, String reason) {
        logger.warn(
                "TcpStore server: closing connection from {}: {}",
                ctx.channel().remoteAddress(),
                reason);
        ctx.close();
    }
}
