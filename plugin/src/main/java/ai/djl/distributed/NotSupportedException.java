package ai.djl.distributed;

/**
 * An operation that this implementation does not offer, for example queues on a {@code FileStore}.
 * The message names the implementation and the operation.
 */
public class NotSupportedException extends DistributedException {

    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception for an implementation and an operation.
     *
     * @param implementation the store or backend, as the user knows it (e.g. {@code "FileStore"})
     * @param operation the operation it lacks (e.g. {@code "queuePush"})
     */
    public NotSupportedException(String implementation, String operation) {
        super(implementation + " does not support " + operation);
    }
}
