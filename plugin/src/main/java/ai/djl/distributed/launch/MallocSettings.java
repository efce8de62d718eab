/*
 * Copyright 2026 The DJL Distributed Authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except
 * in compliance with the License. You may obtain a copy of the License at
 *
 * http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the License
 * is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express
 * or implied. See the License for the specific language governing permissions and limitations under
 * the License.
 */
package ai.djl.distributed.launch;

import java.io.PrintStream;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The glibc malloc settings djlrun gives its workers on Linux, unless the user chose their own.
 * Stateless; nothing here blocks.
 *
 * <p>Why: a JVM's {@code main} runs on a thread that is not the process's first, so glibc serves it
 * from a secondary arena. glibc deletes (unmaps) a secondary arena's extra heaps whenever they
 * empty, whatever the trim threshold, and gives back the top of its first heap once more than the
 * trim threshold is free there. libtorch frees a training step's tensors at the step's end, so
 * every step gave megabytes back to the kernel and faulted them in again: 3,000 to 15,000 minor
 * page faults a step for the GPT of the transformer module (docs/PERFORMANCE.md), each a kernel
 * entry and a zeroed page. That costs compute time and, worse for data parallelism, makes a rank's
 * step time vary, while every synchronized step waits for the slowest rank.
 *
 * <ul>
 *   <li>{@code MALLOC_ARENA_MAX=1}: every thread allocates from the main arena, whose heap is never
 *       deleted (this is the setting that stops the unmapping above). Its cost: the threads share
 *       one arena's lock beyond their per-thread caches.
 *   <li>{@code MALLOC_MMAP_THRESHOLD_=33554432}: blocks below 32 MiB come from the heap, not from
 *       mmap, so they are reused rather than unmapped on free. 32 MiB is the largest value every
 *       glibc accepts (older ones reject more and would keep 128 KiB).
 *   <li>{@code MALLOC_TRIM_THRESHOLD_=1073741824}: the heap's free top is given back only past 1
 *       GiB.
 * </ul>
 *
 * <p>So freed tensor memory is reused, as PyTorch's caching allocators do on GPUs. The cost is that
 * a worker's memory stays near its peak instead of shrinking between steps.
 */
final class MallocSettings {

    /**
     * The settings, as environment variables (glibc's aliases of its malloc tunables), in order.
     */
    static final Map<String, String> TUNED = tuned();

    private MallocSettings() {}

    /**
     * Returns the variables to add to the workers' environment: {@link #TUNED} on Linux, unless the
     * launcher's environment already sets {@code GLIBC_TUNABLES} or a {@code MALLOC_*} variable,
     * even to an empty value (the user's choice wins whole; an empty {@code GLIBC_TUNABLES} keeps
     * glibc's defaults). Prints a note when it adds them.
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
        String settings =
                TUNED.entrySet().stream()
                        .map(e -> e.getKey() + "=" + e.getValue())
                        .collect(Collectors.joining(" "));
        err.println(
                "djlrun: setting "
                        + settings
                        + " for each worker, so that glibc reuses freed tensor memory instead of"
                        + " returning it to the kernel every step; set GLIBC_TUNABLES (even empty)"
                        + " or any MALLOC_ variable to choose your own");
        return TUNED;
    }

    private static Map<String, String> tuned() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("MALLOC_ARENA_MAX", "1");
        m.put("MALLOC_MMAP_THRESHOLD_", Integer.toString(32 << 20));
        m.put("MALLOC_TRIM_THRESHOLD_", Integer.toString(1 << 30));
        return Collections.unmodifiableMap(m);
    }
}
