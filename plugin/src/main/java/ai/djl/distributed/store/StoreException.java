package ai.djl.distributed.store;

import ai.djl.distributed.DistributedException;

/** A store operation failed: the server went away, a protocol error, or an I/O error. */
public class StoreException extends DistributedException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates an exception with a message.
     *
     * @param message what failed, naming the store
     */
    public StoreException(String message) {
        super(message);
    }

    /**
     * Creates an exception with a message and a cause.
     *
     * @param message what failed, naming the store
     * @param cause the underlying failure
     */
    public StoreException(String message, Throwable cause) {
        super(message, cause);
    }
}
