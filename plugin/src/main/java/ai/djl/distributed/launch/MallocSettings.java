package ai.djl.distributed.launch;

import java.io.PrintStream;
import java.util.Map;

/**
 * The glibc malloc settings djlrun gives its workers on Linux, unless the user chose their own.
 *
 * <p>Why: a JVM's {@code main} runs on a thread that is not the process's first, so glibc serves it
 * from a secondary arena, and glibc unmaps a secondary arena's heap as soon as it is empty.
 * libtorch frees a training step's tensors at the step's end, so every step gave megabytes back to
 * the kernel and faulted them in again: 3,000 to 15,000 minor page faults a step for the GPT of the
 * transformer module (docs/PERFORMANCE.md), each a kernel entry plus a zeroed page, and on a
 * virtual machine with free-page reporting a trip to the host as well. That costs compute time and,
 * worse for data parallelism, makes a rank's step time vary, and every synchronized step waits for
 * the slowest rank. One arena, and no trimming or mmap below 1 GiB, let freed tensor memory be
 * reused, as PyTorch's caching allocators do on GPUs; the cost is that a worker keeps up to about 1
 * GiB of freed memory instead of returning it.
 */
final class MallocSettings {

    /** The settings, as environment variables (glibc's aliases of its malloc tunables). */
    static final Map<String, String> TUNED =
            Map.of(
                    "MALLOC_ARENA_MAX", "1",
                    "MALLOC_MMAP_THRESHOLD_", Integer.toString(1 << 30),
                    "MALLOC_TRIM_THRESHOLD_", Integer.toString(1 << 30));

    private MallocSettings() {}

    /**
     * Returns the variables to add to the workers' environment: {@link #TUNED} on Linux, unless the
     * launcher's environment already sets {@code GLIBC_TUNABLES} or a {@code MALLOC_*} variable
     * (the user's choice wins whole; an empty {@code GLIBC_TUNABLES} keeps glibc's defaults).
     * Prints a note when it adds them.
     *
     * @param env the launcher's environment
     * @param osName the operating system's name ({@code os.name})
     * @param err where the note goes
     * @return the variables to add, possibly none
     */
    static Map<String, String> forWorkers(Map<String, String> env, String osName, PrintStream err) {
        boolean userChose =
                env.keySet().stream()
                        .anyMatch(k -> k.equals("GLIBC_TUNABLES") || k.startsWith("MALLOC_"));
        if (userChose || !osName.startsWith("Linux")) {
            return Map.of();
        }
        err.println(
                "djlrun: setting MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=1073741824"
                        + " MALLOC_TRIM_THRESHOLD_=1073741824 for each worker, so that glibc reuses"
                        + " freed tensor memory instead of returning it to the kernel every step;"
                        + " set GLIBC_TUNABLES (even empty) or any MALLOC_ variable to choose your"
                        + " own");
        return TUNED;
    }
}
