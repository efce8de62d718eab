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
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.IoEvent;
import io.netty.channel.IoEventLoop;
import io.netty.channel.IoRegistration;
import io.netty.channel.unix.FileDescriptor;
import io.netty.channel.uring.IoUringIoEvent;
import io.netty.channel.uring.IoUringIoHandle;
import io.netty.channel.uring.IoUringIoOps;
import io.netty.channel.uring.IoUringSocketChannel;
import io.netty.util.AttributeKey;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A plain client connection served straight from io_uring: its socket is taken from the Netty
 * channel its listener accepted, before that channel is registered anywhere, and the event loop's
 * completions ({@link IoUringIoHandle}) read its requests into one buffer and send the replies from
 * another, with no pipeline, request object or outbound buffer between. It serves the queries of a
 * job's steady state as they arrive whole: VALIDATE, PING, SET, GET, ADD, CHECK and WAIT on one
 * key, and CANCEL_WAIT; a WAIT that must wait is woken like any other ({@link Waiter}).
 *
 * <p>The first request it does not serve (another query, one the client sent only part of, a length
 * past the limits or the buffer, a GET of a large value, a refused ADD) hands the connection back
 * to its channel, this request and all after it, once the replies before it are sent: the channel's
 * pipeline then serves the connection for the rest of its life. So the limits, the read timeout,
 * the partial-request budget and the reasons logged for closing have one home, the pipeline. The
 * only part of a request held here is one cut by the end of a full read buffer, while the next read
 * fetches its rest: a client that sends many requests at once stays here, in memory the connection
 * holds anyway. A WAIT still waiting goes over with the connection, as the first request its
 * pipeline reads; a STOP_WAITING or WAIT_CANCELED already queued is written here first, so replies
 * keep their order.
 *
 * <p>Why: the pipeline costs a request some microseconds of Java on top of the system calls; this
 * path took about a microsecond of it off each request (docs/PERFORMANCE.md, issue 19).
 *
 * <p>Runs on its event loop, except where it is started (on the acceptor's thread), {@link
 * #closeLater()} and the wake-up of its WAIT (on the thread of the write that satisfies it, which
 * only queues a task on this loop); not thread-safe. It owns the socket and both buffers while it
 * holds the connection, and closes the socket if it ends there.
 */
final class IoUringConnection implements IoUringIoHandle {

    /** The read buffer: requests up to this size, arriving whole, are served here. */
    static final int READ_BYTES = 4096;

    /** The largest value a GET replies from here; larger ones go out through the pipeline. */
    static final int MAX_REPLY_VALUE = 16 * 1024;

    // stop serving a client's requests while this many reply bytes wait behind a send
    private static final int MAX_QUEUED_REPLIES = 64 * 1024;

    /**
     * The largest sent replies buffer kept for the next replies: thousands of connections parked in
     * a WAIT each keep theirs.
     */
    private static final int MAX_SPARE = 512;

    // io_uring opcodes (linux/io_uring.h): Netty's constants and factories are package-private
    private static final byte IORING_OP_ASYNC_CANCEL = 14;
    private static final byte IORING_OP_SEND = 26;
    private static final byte IORING_OP_RECV = 27;
    // arm the poll before trying the read, for a read armed after every byte was served: the
    // client is waiting for the replies, so its socket is empty. The flag came with Linux 5.19;
    // an older kernel refuses it (-EINVAL), so there each read tries the socket first.
    private static final short IORING_RECVSEND_POLL_FIRST =
            NettyTransport.kernelAtLeast(System.getProperty("os.version", ""), 5, 19)
                    ? (short) 1
                    : (short) 0;
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final int ECANCELED = -125;

    private static final int OPCODE = 1;
    private static final int LENGTH = Long.BYTES;

    // what serveOne() did with the request at the reader index; the statuses are those of the
    // request's layout (SingleKeyRequest): INCOMPLETE is read on if a full buffer cut it, else
    // handed back like ELSEWHERE
    private static final int SERVED = 0;
    private static final int INCOMPLETE = SingleKeyRequest.INCOMPLETE;
    private static final int ELSEWHERE = SingleKeyRequest.ELSEWHERE;

    private static final Logger logger = LoggerFactory.getLogger(IoUringConnection.class);

    // set on a channel handed back after its VALIDATE was served here
    private static final AttributeKey<Boolean> VALIDATED =
            AttributeKey.valueOf(IoUringConnection.class, "validated");

    private final IoUringSocketChannel channel; // registered only when handed back
    private final IoEventLoop loop;
    private final FileDescriptor fd;
    private final IoUringAcceptor server; // the listener's settings and shared state
    private final KeyCache keys; // its loop's: used on the loop only

    private IoRegistration registration;
    private ByteBuf in; // whole requests, read at its writer index; untouched while receiving
    private ByteBuf replies; // replies not yet handed to the kernel
    private ByteBuf sending; // the replies of the SEND in flight: untouched until it completes
    private ByteBuf spare; // a sent replies buffer, kept for the next replies: no allocation each
    private long receiveId;
    private long sendId;
    private boolean receiving;
    private boolean validated;
    // STOP_WAITING and WAIT_CANCELED replies queued on the loop's task queue, not yet written;
    // counted when queued, under the state's lock for a STOP_WAITING
    private final AtomicInteger queuedReplies = new AtomicInteger();
    private boolean paused; // a hand-over waits for the queued replies
    private boolean
            awaitingCancelReply; // the requests after a CANCEL_WAIT wait for its queued reply
    private boolean handingBack;
    private boolean closing;
    private Waiter waiter;
    private ScheduledFuture<?> partialTimer; // while a request cut by a full buffer waits
    private String waitKey; // the key of the last WAIT: the pipeline takes it over if it waits
    private String movedWait; // the WAIT handed over with the connection, or null

    /**
     * Creates the connection of a channel its listener accepted and nobody registered; {@link
     * #start()} hands it to its loop.
     *
     * @param channel the accepted channel, whose socket this then owns
     * @param loop the event loop that serves it, and registers the channel if it is handed back
     * @param server the listener's settings and shared state
     * @param keys the keys its loop read lately
     */
    IoUringConnection(
            IoUringSocketChannel channel, IoEventLoop loop, IoUringAcceptor server, KeyCache keys) {
        this.channel = channel;
        this.loop = loop;
        this.fd = channel.fd();
        this.server = server;
        this.keys = Objects.requireNonNull(keys, "keys");
    }

    /**
     * Tells a channel's initializer whether the connection passed VALIDATE while served here, so
     * its decoder does not ask for it again.
     *
     * @param channel a channel being initialized
     * @return {@code true} if the connection comes from here, validated
     */
    static boolean handedOverValidated(Channel channel) {
        return channel.hasAttr(VALIDATED) && Boolean.TRUE.equals(channel.attr(VALIDATED).get());
    }

    /**
     * Closes every connection held in {@code open}, each on its own loop, and waits for them.
     *
     * @param open the connections
     * @param timeoutMillis the longest wait
     */
    static void closeAll(Set<IoUringConnection> open, long timeoutMillis) {
        for (IoUringConnection connection : open.toArray(new IoUringConnection[0])) {
            connection.closeLater();
        }
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000;
        while (!open.isEmpty() && System.nanoTime() < deadline) {
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Closes this connection on its loop; callable from any thread. */
    void closeLater() {
        if (!loop.isShuttingDown()) {
            loop.execute(this::close);
        }
    }

    /** Registers this connection on its loop, which then serves it; called on the acceptor. */
    void start() {
        loop.register(this)
                .addListener(
                        f -> {
                            if (!f.isSuccess()) {
                                logger.debug("{}: io_uring registration failed", this, f.cause());
                                handBack(Unpooled.EMPTY_BUFFER);
                                return;
                            }
                            registration = (IoRegistration) f.getNow();
                            if (loop.isShuttingDown()) { // its close() may have come first
                                registration.cancel();
                                closeSocket();
                                return;
                            }
                            ByteBuf buffer = channel.alloc().directBuffer(READ_BYTES, READ_BYTES);
                            if (!buffer.hasMemoryAddress()) { // no Unsafe: io_uring cannot use it
                                buffer.release();
                                registration.cancel();
                                handBack(Unpooled.EMPTY_BUFFER);
                                return;
                            }
                            in = buffer;
                            server.open.add(this);
                            try {
                                receive(true);
                            } catch (RuntimeException e) {
                                failed(e);
                            }
                        });
    }

    /** {@inheritDoc} */
    @Override
    public void handle(IoRegistration registration, IoEvent event) {
        IoUringIoEvent completion = (IoUringIoEvent) event;
        byte opcode = completion.opcode();
        try {
            if (opcode == IORING_OP_RECV) {
                receiving = false;
                received(completion.res());
            } else if (opcode == IORING_OP_SEND) {
                sent(completion.res());
            } // else an ASYNC_CANCEL's own completion: its target completes too
        } catch (RuntimeException e) {
            failed(e);
        }
    }

    // A bug: Netty would log the exception and leave this connection stuck, its socket open.
    private void failed(RuntimeException e) {
        logger.warn(
                "TcpStore server: closing connection from {}: {}",
                channel.remoteAddress(),
                e.toString(),
                e);
        close();
    }

    private void received(int result) {
        if (closing) {
            closeIfIdle();
            return;
        }
        if (result <= 0) {
            if (result < 0 && result != ECANCELED) {
                logger.debug("TcpStore server: read from {} failed: errno {}", this, -result);
            }
            close(); // 0: the client closed the connection
            return;
        }
        in.writerIndex(in.writerIndex() + result);
        serve();
    }

    private void sent(int result) {
        if (result < 0) {
            sending.release();
            sending = null;
            if (closing) {
                closeIfIdle();
                return;
            }
            if (result != ECANCELED) {
                logger.debug("TcpStore server: write to {} failed: errno {}", this, -result);
            }
            close();
            return;
        }
        sending.skipBytes(result);
        if (closing) {
            sending.release();
            sending = null;
            closeIfIdle();
            return;
        }
        if (sending.isReadable()) {
            submitSend();
            return;
        }
        keepSpare(sending);
        sending = null;
        flush();
        if (sending != null) {
            return;
        }
        if (handingBack) {
            finishHandingBack();
        } else if (!receiving && !paused && !awaitingCancelReply) {
            serve(); // the replies had filled up: serve what was held back
        }
    }

    // Serves the whole requests in the read buffer, then reads again; or hands the connection back.
    private void serve() {
        while (in.isReadable()) {
            if (awaitingCancelReply) {
                flush(); // what came before the CANCEL_WAIT; the rest once its reply is written
                return;
            }
            if (replies != null && replies.readableBytes() >= MAX_QUEUED_REPLIES) {
                flush(); // a client that does not read its replies is not read either, for now
                return;
            }
            int served = serveOne();
            if (served == INCOMPLETE && !in.isWritable() && in.readerIndex() > 0) {
                // cut by the end of a full buffer, not by the client: make room for its rest,
                // which must come within the read timeout, as the pipeline's decoder would ask
                in.discardReadBytes();
                if (partialTimer == null) {
                    partialTimer =
                            loop.schedule(
                                    this::partialTimedOut,
                                    server.readTimeoutNanos,
                                    TimeUnit.NANOSECONDS);
                }
                break;
            }
            if (served != SERVED) {
                handBackSoon();
                return;
            }
            if (partialTimer != null) { // the request that was cut is whole now
                partialTimer.cancel(false);
                partialTimer = null;
            }
        }
        boolean empty = !in.isReadable();
        if (empty) {
            in.clear();
        }
        flush();
        receive(empty);
    }

    private void partialTimedOut() {
        partialTimer = null;
        if (!closing && in != null && receiving) {
            long millis = TimeUnit.NANOSECONDS.toMillis(server.readTimeoutNanos);
            // the pipeline's words (StoreRequestDecoder), for one reason in the logs
            logger.warn(
                    "TcpStore server: closing connection from {}: {} request still incomplete"
                            + " after {} ms (read timeout {} ms)",
                    channel.remoteAddress(),
                    StoreOpcode.of(in.getUnsignedByte(in.readerIndex())),
                    millis,
                    millis);
            close();
        }
    }

    // Serves the request at the reader index and consumes it, if it is whole and served here.
    private int serveOne() {
        int at = in.readerIndex();
        int end = in.writerIndex();
        int code = in.getUnsignedByte(at);
        if (!validated) {
            // PyTorch 2.2+: the first request is VALIDATE with the magic; else the decoder decides
            if (code != StoreOpcode.VALIDATE.code()
                    || end - at < OPCODE + Integer.BYTES
                    || in.getIntLE(at + OPCODE) != StoreProtocol.MAGIC) {
                return ELSEWHERE;
            }
            validated = true;
            in.readerIndex(at + OPCODE + Integer.BYTES);
            return SERVED;
        }
        StoreOpcode op = StoreOpcode.of(code);
        if (op == null) {
            return ELSEWHERE;
        }
        switch (op) {
            case PING:
                if (end - at < OPCODE + Integer.BYTES) {
                    return INCOMPLETE;
                }
                reply(Integer.BYTES).writeIntLE(in.getIntLE(at + OPCODE));
                in.readerIndex(at + OPCODE + Integer.BYTES);
                return SERVED;
            case CANCEL_WAIT:
                in.readerIndex(at + OPCODE);
                cancelWait();
                awaitingCancelReply =
                        true; // the replies after it follow its reply, as on PyTorch's server
                return SERVED;
            default:
                break;
        }
        // a request larger than this buffer is the pipeline's
        int keyAt = SingleKeyRequest.keyAt(in, op, at, end);
        int next =
                keyAt < 0
                        ? keyAt
                        : SingleKeyRequest.keyEnd(
                                in,
                                at,
                                keyAt,
                                end,
                                server.maxKeyBytes,
                                server.maxRequestBytes,
                                READ_BYTES);
        if (next < 0) {
            return next;
        }
        String key = keys.key(in, keyAt, next - keyAt);
        try {
            return serveKey(op, key, at, next, end);
        } catch (StoreException e) {
            // a refused ADD, say: nothing was stored; the pipeline refuses it again and says why
            in.readerIndex(at);
            return ELSEWHERE;
        }
    }

    // The request's key has been read: the rest of it, and its reply.
    private int serveKey(StoreOpcode op, String key, int at, int next, int end) {
        switch (op) {
            case SET:
                int valueEnd =
                        SingleKeyRequest.valueEnd(
                                in,
                                at,
                                next,
                                end,
                                server.maxRequestBytes - key.length(),
                                READ_BYTES);
                if (valueEnd < 0) {
                    return valueEnd;
                }
                byte[] value = new byte[valueEnd - next - LENGTH];
                in.getBytes(next + LENGTH, value);
                server.state.set(key, value);
                in.readerIndex(valueEnd);
                return SERVED;
            case GET:
                byte[] stored = server.state.get(key);
                int length = stored == null ? 0 : stored.length;
                if (length > MAX_REPLY_VALUE) {
                    return ELSEWHERE; // sent without a copy by the pipeline
                }
                ByteBuf out = reply(LENGTH + length).writeLongLE(length);
                if (stored != null) {
                    out.writeBytes(stored);
                }
                in.readerIndex(next);
                return SERVED;
            case ADD:
                if (end - next < LENGTH) {
                    return INCOMPLETE;
                }
                long sum = server.state.add(key, in.getLongLE(next));
                reply(LENGTH).writeLongLE(sum);
                in.readerIndex(next + LENGTH);
                return SERVED;
            case CHECK:
                boolean ready = server.state.check(List.of(key));
                reply(1).writeByte(
                                ready ? StoreProtocol.CHECK_READY : StoreProtocol.CHECK_NOT_READY);
                in.readerIndex(next);
                return SERVED;
            default: // WAIT on one key
                if (waiter == null) {
                    waiter =
                            new Waiter(
                                    task -> {
                                        queuedReplies.incrementAndGet();
                                        try {
                                            loop.execute(task);
                                        } catch (RejectedExecutionException e) {
                                            queuedReplies.decrementAndGet(); // the loop has stopped
                                        }
                                    },
                                    this::stopWaiting);
                }
                in.readerIndex(next);
                waitKey = key;
                if (server.state.await(waiter, List.of(key))) { // any earlier WAIT is replaced
                    reply(1).writeByte(StoreProtocol.STOP_WAITING);
                }
                return SERVED;
        }
    }

    // Run on the loop after a write satisfied this connection's WAIT (StoreState's lock order).
    private void stopWaiting() {
        writeQueued(StoreProtocol.STOP_WAITING);
    }

    // As the pipeline does: WAIT_CANCELED goes behind any STOP_WAITING already queued by a write.
    private void cancelWait() {
        if (waiter != null) {
            server.state.cancel(waiter);
        }
        queuedReplies.incrementAndGet();
        loop.execute(() -> writeQueued(StoreProtocol.WAIT_CANCELED));
    }

    // The hand-over waits while such a reply is queued, so this connection still holds its socket.
    private void writeQueued(int reply) {
        queuedReplies.decrementAndGet();
        if (closing) {
            return;
        }
        reply(1).writeByte(reply);
        flush();
        if (queuedReplies.get() > 0) {
            return;
        }
        if (paused) {
            paused = false;
            handBackSoon();
        } else if (awaitingCancelReply) {
            awaitingCancelReply = false;
            if (!receiving) { // else the read in flight serves on when it completes
                serve(); // the requests that came after the CANCEL_WAIT, then the next read
            }
        }
    }

    private ByteBuf reply(int bytes) {
        if (replies == null) {
            if (spare != null) {
                replies = spare;
                spare = null;
            } else {
                replies = channel.alloc().directBuffer(Math.max(256, bytes));
            }
        }
        return replies.ensureWritable(bytes);
    }

    // Keeps a sent buffer for the next replies unless one is kept already or it grew (a large GET,
    // a client that read late): one stays per connection, at most MAX_SPARE bytes.
    private void keepSpare(ByteBuf sent) {
        if (spare == null && sent.capacity() <= MAX_SPARE) {
            spare = sent.clear();
        } else {
            sent.release();
        }
    }

    private void flush() {
        if (sending == null && replies != null && replies.isReadable()) {
            sending = replies;
            replies = null;
            submitSend();
        }
    }

    private void submitSend() {
        long at = sending.memoryAddress() + sending.readerIndex();
        sendId =
                registration.submit(
                        op(IORING_OP_SEND, (short) 0, at, sending.readableBytes(), MSG_NOSIGNAL));
    }

    // Every byte served: the client waits for the replies, so the socket is empty; poll first.
    private void receive(boolean served) {
        long at = in.memoryAddress() + in.writerIndex();
        short pollFirst = served ? IORING_RECVSEND_POLL_FIRST : 0;
        receiving = true;
        receiveId = registration.submit(op(IORING_OP_RECV, pollFirst, at, in.writableBytes(), 0));
    }

    private IoUringIoOps op(byte opcode, short ioPrio, long address, int length, int flags) {
        // completions are told apart by their opcode: the data field stays 0
        return new IoUringIoOps(
                opcode,
                (byte) 0,
                ioPrio,
                fd.intValue(),
                0L,
                address,
                length,
                flags,
                0L,
                (short) 0,
                (short) 0,
                0,
                0L);
    }

    private void cancel(long id) {
        registration.submit(
                new IoUringIoOps(
                        IORING_OP_ASYNC_CANCEL,
                        (byte) 0,
                        (short) 0,
                        -1,
                        0L,
                        id,
                        0,
                        0,
                        0L,
                        (short) 0,
                        (short) 0,
                        0,
                        0L));
    }

    // The request at the reader index is not served here: the channel takes the connection once
    // the replies before it are out, with the WAIT still waiting if there is one.
    private void handBackSoon() {
        if (waiter != null && server.state.cancel(waiter)) {
            movedWait = waitKey; // no write can wake it now: the pipeline registers it again
        }
        if (queuedReplies.get() > 0) {
            paused = true;
            flush();
            return;
        }
        handingBack = true;
        flush();
        if (sending == null) {
            finishHandingBack();
        }
    }

    private void finishHandingBack() {
        // nothing in flight: unregistered() follows, at once or after the completion being handled
        registration.cancel();
    }

    /** {@inheritDoc} */
    @Override
    public void unregistered() {
        if (replies != null) {
            replies.release();
            replies = null;
        }
        if (spare != null) {
            spare.release();
            spare = null;
        }
        ByteBuf rest = in;
        in = null;
        if (handingBack && !closing) {
            if (movedWait != null) {
                byte[] key = movedWait.getBytes(StandardCharsets.ISO_8859_1);
                ByteBuf wait = channel.alloc().buffer(OPCODE + 2 * LENGTH + key.length);
                wait.writeByte(StoreOpcode.WAIT.code()).writeLongLE(1);
                wait.writeLongLE(key.length).writeBytes(key);
                rest = Unpooled.wrappedBuffer(wait, rest);
            }
            handBack(rest);
            return;
        }
        if (rest != null) {
            rest.release();
        }
        if (waiter != null) {
            server.state.cancel(waiter);
        }
        server.open.remove(this);
    }

    // Registers the channel, on this loop, with its pipeline, and gives it the bytes not served
    // here.
    private void handBack(ByteBuf rest) {
        channel.attr(VALIDATED).set(validated);
        channel.pipeline().addLast(server.initializer);
        ((EventLoop) loop) // IoEventLoop deprecates registering a channel; EventLoop does not
                .register(channel)
                .addListener(
                        f -> {
                            // kept in the open set until here, so that the server's close() waits
                            // until the channel is in its group
                            server.open.remove(this);
                            if (!f.isSuccess()) {
                                logger.debug("{}: registration failed", this, f.cause());
                                rest.release();
                                closeSocket();
                                return;
                            }
                            // the channel has read nothing yet: the read this arms completes after
                            // this listener returns, so these bytes come first
                            channel.config().setAutoRead(true);
                            if (rest.isReadable()) {
                                channel.pipeline().fireChannelRead(rest).fireChannelReadComplete();
                            } else {
                                rest.release();
                            }
                        });
    }

    /**
     * Ends the connection: cancels the read and write in flight, then closes the socket. Also
     * called by the loop when it shuts down.
     */
    @Override
    public void close() {
        if (closing || registration == null || in == null) {
            return;
        }
        closing = true;
        if (partialTimer != null) {
            partialTimer.cancel(false);
            partialTimer = null;
        }
        if (waiter != null) {
            server.state.cancel(waiter);
        }
        if (receiving) {
            cancel(receiveId);
        }
        if (sending != null) {
            cancel(sendId);
        }
        closeIfIdle();
    }

    private void closeIfIdle() {
        if (!receiving && sending == null) {
            closeSocket();
            server.open.remove(this);
            registration.cancel();
        }
    }

    private void closeSocket() {
        try {
            fd.close();
        } catch (IOException e) {
            logger.debug("TcpStore server: closing {} failed", this, e);
        }
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return "IoUringConnection(" + channel.remoteAddress() + ")";
    }
}
