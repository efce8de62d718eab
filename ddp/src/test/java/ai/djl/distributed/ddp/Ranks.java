package ai.djl.distributed.ddp;

import ai.djl.distributed.testing.MultiRank;

import java.time.Duration;
import java.util.List;

/**
 * The plugin's in-process multi-rank harness ({@link MultiRank}) as the DDP tests use it, with the
 * lock they share: DJL's PyTorch engine allows one {@code GradientCollector} at a time per JVM, so
 * ranks take {@link #BACKWARD} around forward and backward; their steps (the collectives) run
 * unlocked.
 */
final class Ranks {

    /** Held by a rank from before its forward pass to after its backward pass. */
    static final Object BACKWARD = new Object();

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private Ranks() {}

    static <T> List<T> run(int size, MultiRank.Body<T> body) throws Exception {
        return MultiRank.run(size, TIMEOUT, body);
    }
}
