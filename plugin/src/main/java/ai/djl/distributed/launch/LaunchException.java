package ai.djl.distributed.launch;

import ai.djl.distributed.DistributedException;

/**
 * The launcher cannot go on: the nodes did not meet in time, the agent store was lost or cannot be
 * served, or a worker cannot be started. The message says what, where and for how long.
 */
final class LaunchException extends DistributedException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what failed and why
     */
    LaunchException(String message) {
        super(message);
    }

    /**
     * Creates the exception.
     *
     * @param message what failed and why
     * @param cause the underlying failure
     */
    LaunchException(String message, Throwable cause) {
        super(message, cause);
    }
}
