package ai.djl.distributed.backend.cpu.transport;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.backend.AbortNotices;

/**
 * The connection to a peer ended without the peer saying why: end of stream, a reset, a broken
 * pipe, a ring whose producer is gone. The peer may have died, or may have aborted its group with a
 * reason it could not send in band; {@link LinkTransport} then looks for that reason in the store
 * ({@link ai.djl.distributed.backend.AbortNotices}) before it reports the loss.
 */
final class LinkLostException extends CommunicationException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was lost, naming the peer
     * @param peerRank the peer
     * @param cause the I/O failure, or null at a plain end of stream
     */
    LinkLostException(String message, int peerRank, Throwable cause) {
        super(message, peerRank, cause);
    }

    /**
     * Returns whether a failure is, or wraps, a lost connection.
     *
     * @param e the failure
     * @return whether a {@link LinkLostException} is in its cause chain
     */
    static boolean isLoss(Throwable e) {
        if (AbortNotices.isExplained(e)) {
            return false; // the peer's reason is known already
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof LinkLostException) {
                return true;
            }
        }
        return false;
    }
}
