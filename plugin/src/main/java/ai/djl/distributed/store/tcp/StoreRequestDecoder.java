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

import ai.djl.distributed.store.tcp.StoreOpcode.Field;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.util.concurrent.ScheduledFuture;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Decodes the byte stream of a TCPStore client into {@link StoreRequest}s. The stream has no
 * message boundaries (PyTorch clients flush at 1440 bytes, older ones send field by field), so the
 * decoder is a state machine that consumes whatever has arrived and resumes where it stopped.
 *
 * <p>Every length is checked against the limits before its bytes are awaited: a hostile or broken
 * length field raises {@link StoreCodecException} at once instead of buffering without bound. The
 * decoder also checks PyTorch 2.2+'s handshake: the first query must be VALIDATE with the protocol
 * magic, refused at its first byte otherwise. After a rejection the decoder discards its input: the
 * server closes the connection.
 *
 * <p>A value is copied into its array as its bytes arrive, so the cumulation buffer only ever holds
 * a partial header or key. A value that arrives whole gets its array at once, and is copied once;
 * one that does not gets an array that grows (doubling, up to its length) with the bytes received,
 * so a length announced costs nothing until its bytes come. A request that spans several reads is
 * <em>partial</em>: before waiting for more bytes, and before growing an array, the decoder claims
 * what it holds from the server's {@link MemoryBudget} (refused: the connection is closed), and a
 * request still partial after the read timeout closes the connection. Between requests nothing is
 * held and no timeout runs, however long the connection stays idle. A request that arrives whole
 * costs neither a claim nor a timer.
 */
public final class StoreRequestDecoder extends ByteToMessageDecoder {

    private enum State {
        OPCODE,
        FIELDS,
        /** After a malformed request: the stream has no frames to resync on, so drop the rest. */
        FAILED
    }

    /** Bytes a decoded key or value costs beyond its content: object headers and a list slot. */
    private static final int ENTRY_OVERHEAD = 48;

    /** The first array of a value that does not arrive whole, unless more of it has arrived. */
    private static final int FIRST_PARTIAL_VALUE = 4096;

    private static final byte[] NO_BYTES = new byte[0];

    private final int maxKeyBytes;
    private final long maxRequestBytes;
    private final int maxKeys;
    private final MemoryBudget budget;
    private final long readTimeoutNanos; // 0: none

    private State state = State.OPCODE;
    private boolean validated; // PyTorch 2.2+: every connection opens with VALIDATE
    private StoreOpcode opcode;
    private int field; // index into opcode.shape() of the next field
    private long repeats; // rounds of the repeated group still to read, after a COUNT
    private int groupStart; // first field of the repeated group
    private long length = -1; // length of the KEY or VALUE being read, once its header is in
    private long requestBytes;
    private long number;
    private List<String> keys;
    private List<byte[]> values;
    private byte[] value; // the VALUE being received, grown as its bytes arrive
    private int filled; // bytes of value received so far
    private long claimed; // from the budget, for the request in progress
    private boolean partial; // the request in progress has waited for bytes at least once
    private long partialSince; // System.nanoTime() when it first did
    private ScheduledFuture<?> timer; // the read-timeout check, while one is scheduled

    /**
     * Creates a decoder with limits, a budget of its own without bound and no read timeout.
     *
     * @param maxKeyBytes the largest key accepted
     * @param maxRequestBytes the most key and value bytes one request may carry
     * @param maxKeys the most keys one request may name
     */
    public StoreRequestDecoder(int maxKeyBytes, long maxRequestBytes, int maxKeys) {
        this(maxKeyBytes, maxRequestBytes, maxKeys, new MemoryBudget(Long.MAX_VALUE), null);
    }

    /**
     * Creates a decoder of a server's connection.
     *
     * @param maxKeyBytes the largest key accepted
     * @param maxRequestBytes the most key and value bytes one request may carry
     * @param maxKeys the most keys one request may name
     * @param budget the memory partial requests of all the server's connections may hold
     * @param readTimeout how long a request may stay partial, or {@code null} for no limit
     */
    StoreRequestDecoder(
            int maxKeyBytes,
            long maxRequestBytes,
            int maxKeys,
            MemoryBudget budget,
            Duration readTimeout) {
        this.maxKeyBytes = maxKeyBytes;
        this.maxRequestBytes = maxRequestBytes;
        this.maxKeys = maxKeys;
        this.budget = budget;
        this.readTimeoutNanos = readTimeout == null ? 0 : readTimeout.toNanos();
    }

    /** Creates a decoder with the default limits of {@link StoreProtocol}. */
    public StoreRequestDecoder() {
        this(
                StoreProtocol.DEFAULT_MAX_KEY_BYTES,
                StoreProtocol.DEFAULT_MAX_REQUEST_BYTES,
                StoreProtocol.DEFAULT_MAX_KEYS);
    }

    /**
     * Tells whether the next byte of the stream starts a request of a validated connection: the
     * decoder holds no part of one, and has refused nothing.
     */
    boolean isIdle() {
        return validated && state == State.OPCODE && !internalBuffer().isReadable();
    }

    /** Skips the VALIDATE check: a {@link StoreAuthServerHandler} has done it, and more. */
    void markValidated() {
        validated = true;
    }

    /** {@inheritDoc} */
    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (state == State.FAILED) {
            in.skipBytes(in.readableBytes());
            return;
        }
        if (state == State.OPCODE && !decodeOpcode(in)) {
            return;
        }
        if (!decodeFields(in)) {
            awaitRest(ctx, in);
            return;
        }
        if (!validated) {
            // the opcode was checked on arrival; the handshake is complete with the magic
            if ((int) number != StoreProtocol.MAGIC) {
                throw fail(
                        "VALIDATE with magic 0x"
                                + Long.toHexString(number)
                                + ", expected 0x"
                                + Integer.toHexString(StoreProtocol.MAGIC));
            }
            validated = true;
        }
        out.add(new StoreRequest(opcode, keys, values, number));
        reset();
    }

    /** A request cut short by the end of the stream can never complete: drop it. */
    @Override
    protected void decodeLast(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        in.skipBytes(in.readableBytes());
        reset();
    }

    /** {@inheritDoc} */
    @Override
    protected void handlerRemoved0(ChannelHandlerContext ctx) {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
        reset(); // gives back this connection's claim
    }

    private boolean decodeOpcode(ByteBuf in) {
        if (!in.isReadable()) {
            return false;
        }
        int code = in.readUnsignedByte();
        StoreOpcode op = StoreOpcode.of(code);
        if (op == null) {
            throw fail("unknown query type " + code);
        }
        if (!validated && op != StoreOpcode.VALIDATE) {
            // refuse before buffering anything a client that skipped the handshake sends
            throw fail("first query is " + op + ", expected VALIDATE");
        }
        opcode = op;
        keys = new ArrayList<>(1);
        values = new ArrayList<>(1);
        state = State.FIELDS;
        return true;
    }

    // Reads fields until the request is complete (true) or the input runs dry (false).
    private boolean decodeFields(ByteBuf in) {
        Field[] shape = opcode.shape();
        while (field < shape.length) {
            if (!decodeField(shape[field], in)) {
                return false;
            }
            ++field;
            if (field == shape.length && repeats > 1) {
                --repeats;
                field = groupStart;
            }
        }
        return true;
    }

    private boolean decodeField(Field kind, ByteBuf in) {
        switch (kind) {
            case U32:
                if (in.readableBytes() < Integer.BYTES) {
                    return false;
                }
                number = in.readUnsignedIntLE();
                return true;
            case I64:
                if (in.readableBytes() < Long.BYTES) {
                    return false;
                }
                number = in.readLongLE();
                return true;
            case COUNT:
                return decodeCount(in);
            case KEY:
                return decodeBytes(in, true);
            case VALUE:
                return decodeBytes(in, false);
            default:
                throw new AssertionError(kind);
        }
    }

    private boolean decodeCount(ByteBuf in) {
        if (in.readableBytes() < Long.BYTES) {
            return false;
        }
        long count = in.readLongLE();
        if (count < 0 || count > maxKeys) {
            throw fail(
                    opcode
                            + " names "
                            + Long.toUnsignedString(count)
                            + " keys (limit "
                            + maxKeys
                            + ")");
        }
        groupStart = field + 1;
        repeats = count;
        if (count == 0) {
            field = opcode.shape().length - 1; // nothing to repeat: the request is complete
        }
        return true;
    }

    private boolean decodeBytes(ByteBuf in, boolean isKey) {
        if (length < 0) {
            if (in.readableBytes() < Long.BYTES) {
                return false;
            }
            long n = in.readLongLE();
            String what = isKey ? "key" : "value";
            if (n < 0 || (isKey && n > maxKeyBytes)) {
                throw fail(
                        opcode
                                + " "
                                + what
                                + " of "
                                + Long.toUnsignedString(n)
                                + " bytes (limit "
                                + (isKey ? maxKeyBytes : maxRequestBytes)
                                + ")");
            }
            // Compared before adding: a length near Long.MAX_VALUE would wrap a sum negative.
            if (n > maxRequestBytes - requestBytes) {
                throw fail(opcode + " request of more than " + maxRequestBytes + " bytes");
            }
            requestBytes += n;
            length = n;
        }
        if (!isKey) {
            return decodeValue(in);
        }
        if (in.readableBytes() < length) {
            return false;
        }
        keys.add(in.readCharSequence((int) length, StandardCharsets.ISO_8859_1).toString());
        length = -1;
        return true;
    }

    // Copies what has arrived into the value's array: the bytes are copied once if they arrived
    // whole, and the cumulation buffer does not grow with the value.
    private boolean decodeValue(ByteBuf in) {
        int n = (int) Math.min(in.readableBytes(), length - filled);
        if (value == null) {
            value = n == length ? new byte[n] : NO_BYTES; // whole: its array at once, no claim
        }
        if (filled + n > value.length) {
            grow(in, n);
        }
        in.readBytes(value, filled, n);
        filled += n;
        if (filled < length) {
            return false;
        }
        values.add(value);
        value = null;
        filled = 0;
        length = -1;
        return true;
    }

    // Makes room for n more bytes of a value that arrives in parts: doubles the array, up to the
    // value's length, claiming old and new array both before allocating (the copy needs both).
    private void grow(ByteBuf in, int n) {
        long size = Math.max(filled + n, Math.max(FIRST_PARTIAL_VALUE, 2L * value.length));
        size = Math.min(size, length);
        claim(holding(in) + size);
        value = Arrays.copyOf(value, (int) size);
    }

    // The request waits for more bytes: claim what it holds, and start its read timeout.
    private void awaitRest(ChannelHandlerContext ctx, ByteBuf in) {
        claim(holding(in));
        if (partial) {
            return;
        }
        partial = true;
        partialSince = System.nanoTime();
        if (readTimeoutNanos > 0 && timer == null) {
            scheduleReadTimeout(ctx, readTimeoutNanos);
        }
    }

    // What the request in progress holds: the keys and values it has received, the array of a
    // value still arriving (never the length it announced), plus the cumulation buffer (which
    // holds a key still arriving), freed once fully read.
    private long holding(ByteBuf in) {
        long entries = keys.size() + values.size() + 1L;
        long received = requestBytes - (length < 0 ? 0 : length);
        long array = value == null ? 0 : value.length;
        return received + array + entries * ENTRY_OVERHEAD + (in.isReadable() ? in.capacity() : 0);
    }

    // Adjusts this connection's claim to what its request holds now.
    private void claim(long bytes) {
        long more = bytes - claimed;
        if (more > 0 && !budget.tryClaim(more)) {
            throw fail(
                    opcode
                            + " request would hold "
                            + bytes
                            + " bytes while partly received, past the budget of "
                            + budget.limit()
                            + " bytes for partial requests ("
                            + budget.held()
                            + " held by all connections)");
        }
        if (more < 0) {
            budget.release(-more);
        }
        claimed = bytes;
    }

    // One check per connection at a time: it runs when the oldest partial request it may concern
    // is due, and reschedules itself for a younger one. Never rescheduled per request.
    private void scheduleReadTimeout(ChannelHandlerContext ctx, long delayNanos) {
        timer =
                ctx.executor()
                        .schedule(() -> checkReadTimeout(ctx), delayNanos, TimeUnit.NANOSECONDS);
    }

    private void checkReadTimeout(ChannelHandlerContext ctx) {
        timer = null;
        if (!partial || !ctx.channel().isActive()) {
            return;
        }
        long waited = System.nanoTime() - partialSince;
        if (waited < readTimeoutNanos) {
            scheduleReadTimeout(ctx, readTimeoutNanos - waited);
            return;
        }
        ctx.fireExceptionCaught(
                fail(
                        opcode
                                + " request still incomplete after "
                                + TimeUnit.NANOSECONDS.toMillis(waited)
                                + " ms (read timeout "
                                + TimeUnit.NANOSECONDS.toMillis(readTimeoutNanos)
                                + " ms)"));
    }

    private StoreCodecException fail(String message) {
        reset();
        state = State.FAILED;
        return new StoreCodecException(message);
    }

    private void reset() {
        if (claimed > 0) {
            budget.release(claimed);
            claimed = 0;
        }
        partial = false;
        value = null;
        filled = 0;
        state = State.OPCODE;
        opcode = null;
        field = 0;
        repeats = 0;
        groupStart = 0;
        length = -1;
        requestBytes = 0;
        number = 0;
        keys = null;
        values = null;
    }
}
