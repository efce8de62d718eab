package ai.djl.distributed.store.tcp;

import io.netty.handler.codec.DecoderException;

/** A malformed or oversized TCPStore message; the connection that sent it is closed. */
public class StoreCodecException extends DecoderException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was wrong with the message
     */
    public StoreCodecException(String message) {
        super(message);
    }
}
