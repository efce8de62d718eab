package ai.djl.distributed.backend.cpu.transport;

import java.nio.ByteBuffer;

/**
 * How a reducing receive combines arriving elements into its buffer ({@link Transport#recvReduce});
 * the transport knows only element sizes, not the reduction.
 */
public interface Reducer {

    /**
     * Returns the size of one element.
     *
     * @return bytes per element
     */
    int elementSize();

    /**
     * Combines {@code count} elements: {@code acc[i] = op(acc[i], src[i])}.
     *
     * @param acc the accumulator
     * @param accOffset its byte offset
     * @param src the arriving elements
     * @param srcOffset their byte offset
     * @param count the number of elements
     */
    void reduce(ByteBuffer acc, int accOffset, ByteBuffer src, int srcOffset, int count);
}
