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

import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Collectors;

/**
 * Stops child processes as djlrun stops its workers: SIGTERM, a grace period, then SIGKILL to
 * whatever still runs, each wait bounded. Used by {@link LocalWorkers} and by the tools that start
 * processes of their own ({@code djl-dist bench collectives}). Stateless and thread-safe.
 */
public final class ChildProcesses {

    private ChildProcesses() {}

    /**
     * Stops the processes {@code live} finds: SIGTERM to each, then SIGKILL to those {@code live}
     * finds again after the grace period (a process may have started others meanwhile). Blocks for
     * at most {@code grace} plus {@code killWait}.
     *
     * @param live the processes to stop, found anew for the SIGKILL; zombies and exited ones are
     *     left out
     * @param grace how long the processes may take to exit after SIGTERM
     * @param killWait how long to wait for them to go after SIGKILL
     */
    public static void stop(Supplier<List<ProcessHandle>> live, Duration grace, Duration killWait) {
        List<ProcessHandle> all = running(live);
        if (all.isEmpty()) {
            return;
        }
        all.forEach(ProcessHandle::destroy);
        if (!awaitGone(all, grace)) {
            List<ProcessHandle> left = running(live);
            left.forEach(ProcessHandle::destroyForcibly);
            awaitGone(left, killWait);
        }
    }

    private static List<ProcessHandle> running(Supplier<List<ProcessHandle>> live) {
        return live.get().stream()
                .filter(ProcessGroups::running)
                .distinct()
                .collect(Collectors.toList());
    }

    /**
     * Waits until none of the processes runs (a zombie has exited: it may never be reaped where
     * this JVM is pid 1), or the timeout.
     *
     * @param handles the processes
     * @param timeout the longest wait
     * @return {@code true} if they are all gone
     */
    static boolean awaitGone(List<ProcessHandle> handles, Duration timeout) {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (handles.stream().anyMatch(ProcessGroups::running)) {
            if (System.nanoTime() - deadline >= 0) {
                return false;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }
}
