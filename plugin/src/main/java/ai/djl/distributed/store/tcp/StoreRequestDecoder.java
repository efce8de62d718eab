package ai.djl.distributed.store.tcp;

import ai.djl.distributed.store.tcp.StoreOpcode.Field;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

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
 */
public final class StoreRequestDecoder extends ByteToMessageDecoder {

    private enum State {
        OPCODE,
        FIELDS,
        /** After a malformed request: the stream has no frames to resync on, so drop the rest. */
        FAILED
    }

    private final int maxKeyBytes;
    private final long maxRequestBytes;
    private final int maxKeys;

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

    /**
     * Creates a decoder with limits.
     *
     * @param maxKeyBytes the largest key accepted
     * @param maxRequestBytes the most key and value bytes one request may carry
     * @param maxKeys the most keys one request may name
     */
    public StoreRequestDecoder(int maxKeyBytes, long maxRequestBytes, int maxKeys) {
        this.maxKeyBytes = maxKeyBytes;
        this.maxRequestBytes = maxRequestBytes;
        this.maxKeys = maxKeys;
    }

    /** Creates a decoder with the default limits of {@link StoreProtocol}. */
    public StoreRequestDecoder() {
        this(
                StoreProtocol.DEFAULT_MAX_KEY_BYTES,
                StoreProtocol.DEFAULT_MAX_REQUEST_BYTES,
                StoreProtocol.DEFAULT_MAX_KEYS);
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
        if (decodeFields(in)) {
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
            requestBytes += n;
            if (requestBytes > maxRequestBytes) {
                throw fail(opcode + " request of more than " + maxRequestBytes + " bytes");
            }
            length = n;
        }
        if (in.readableBytes() < length) {
            return false;
        }
        if (isKey) {
            keys.add(in.readCharSequence((int) length, StandardCharsets.ISO_8859_1).toString());
        } else {
            byte[] value = new byte[(int) length];
            in.readBytes(value);
            values.add(value);
        }
        length = -1;
        return true;
    }

    private StoreCodecException fail(String message) {
        reset();
        state = State.FAILED;
        return new StoreCodecException(message);
    }

    private void reset() {
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
