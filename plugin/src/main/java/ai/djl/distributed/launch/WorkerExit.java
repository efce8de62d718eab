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

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

/**
 * How a worker ended.
 *
 * @param rank its global rank
 * @param localRank its local rank
 * @param groupRank its node's rank
 * @param pid its process id
 * @param exitCode its exit status; 128 + N when signal N ended it, as Java reports it
 * @param time when the launcher saw it end
 */
record WorkerExit(int rank, int localRank, int groupRank, long pid, int exitCode, Instant time) {

    private static final Map<Integer, String> SIGNALS =
            Map.of(
                    1, "SIGHUP", 2, "SIGINT", 3, "SIGQUIT", 4, "SIGILL", 6, "SIGABRT", 7, "SIGBUS",
                    8, "SIGFPE", 9, "SIGKILL", 11, "SIGSEGV", 15, "SIGTERM");

    /**
     * Returns whether the worker failed.
     *
     * @return {@code true} for a non-zero exit status
     */
    boolean failed() {
        return exitCode != 0;
    }

    /**
     * Describes the exit, naming the rank, where it ran, the exit code (and the signal it suggests)
     * and the time, e.g. {@code "rank 1 (local rank 1 on node 0, pid 4242) exited with code 3 at
     * 2025-01-02T03:04:05.678Z"}.
     *
     * @return the description
     */
    String describe() {
        return "rank "
                + rank
                + " (local rank "
                + localRank
                + " on node "
                + groupRank
                + ", pid "
                + pid
                + ") exited with code "
                + exitCode
                + signal()
                + " at "
                + time.truncatedTo(ChronoUnit.MILLIS);
    }

    private String signal() {
        String name = exitCode > 128 ? SIGNALS.get(exitCode - 128) : null;
        return name == null ? "" : " (128+" + (exitCode - 128) + ": " + name + ")";
    }
}
