package ai.djl.distributed.backend.cpu.transport;

import java.time.Duration;

/**
 * When an operation must be done, with the timeout it came from (for messages).
 *
 * @param nanos the deadline, on {@link System#nanoTime()}'s clock
 * @param timeout the timeout the deadline was computed from
 */
public record Deadline(long nanos, Duration timeout) {

    /**
     * Returns the deadline {@code timeout} from now.
     *
     * @param timeout the timeout, positive
     * @return the deadline
     */
    public static Deadline after(Duration timeout) {
        long now = System.nanoTime();
        long t = timeout.toNanos();
        // Saturate: a timeout of years must not wrap into the past.
        return new Deadline(t > Long.MAX_VALUE - now ? Long.MAX_VALUE : now + t, timeout);
    }

    /**
     * Returns the time left.
     *
     * @return nanoseconds left; zero or negative once passed
     */
    public long remainingNanos() {
        return nanos - System.nanoTime();
    }
}
