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

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Workers in process groups of their own, as torchrun starts them: each starts through {@code
 * setsid(1)}, so its pid names a group that holds it and whatever it starts, and stopping a worker
 * stops the whole group. Without it a worker's children, once the worker has exited (as a failed
 * one has), belong to init and are no longer found among its descendants: they ran on after the
 * job, holding ports, memory or a GPU. Linux only; elsewhere, or where {@code setsid} is missing,
 * commands run as given and a worker's group is its descendants. Stateless and thread-safe.
 */
final class ProcessGroups {

    private static final Optional<Path> SETSID = find();

    private ProcessGroups() {}

    /**
     * Returns the command that starts {@code command} as the leader of a new session and process
     * group, with the same pid (setsid execs in place: a child of the JVM leads no group).
     *
     * @param command the worker's command
     * @return the command to run
     */
    static List<String> command(List<String> command) {
        if (SETSID.isEmpty()) {
            return command;
        }
        List<String> wrapped = new ArrayList<>(command.size() + 1);
        wrapped.add(SETSID.get().toString());
        wrapped.addAll(command);
        return wrapped;
    }

    /**
     * Returns the running processes of the process group that {@code leader} started, read from
     * {@code /proc} (zombies left out): empty where there is none. Does not block beyond reading
     * {@code /proc}.
     *
     * @param leader the worker, its group's leader (alive or not)
     * @return the group's processes, the leader too while it lives
     */
    static List<ProcessHandle> members(ProcessHandle leader) {
        List<ProcessHandle> members = new ArrayList<>();
        long pgid = leader.pid();
        Optional<ProcessHandle> holder = ProcessHandle.of(pgid);
        // The kernel reuses no pid while a group bears it; once the group is empty it may. A live
        // process with the leader's pid that is not the leader (another start time) heads
        // someone else's group.
        if (SETSID.isEmpty() || holder.isPresent() && !holder.get().equals(leader)) {
            return members;
        }
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path p : procs) {
                Path name = p.getFileName();
                long pid;
                try {
                    pid = Long.parseLong(name == null ? "" : name.toString());
                } catch (NumberFormatException e) {
                    continue;
                }
                if (stat(p)[1] != pgid) {
                    continue;
                }
                // Read again with the handle taken first, which holds the process's start time:
                // still alive after the read, it is the process whose stat was read (a pid reused
                // meanwhile has another start time), so an unrelated process that took a member's
                // pid between the reads is never taken.
                Optional<ProcessHandle> h = ProcessHandle.of(pid);
                long[] stat = stat(p);
                if (h.isPresent() && stat[1] == pgid && stat[0] != 'Z' && h.get().isAlive()) {
                    members.add(h.get());
                }
            }
        } catch (IOException e) {
            // no /proc: the group is the worker's descendants, found by the caller
        }
        // as above: the leader's pid taken meanwhile by another process, which heads another group
        holder = ProcessHandle.of(pgid);
        if (holder.isPresent() && !holder.get().equals(leader)) {
            members.clear();
        }
        return members;
    }

    /**
     * Returns whether a process runs: alive and not a zombie, which has exited and only waits for
     * its parent to collect it (forever where that parent is a launcher running as pid 1, as in a
     * container: Java counts it as alive, yet no signal can end it).
     *
     * @param h the process
     * @return {@code true} while it runs
     */
    static boolean running(ProcessHandle h) {
        if (!h.isAlive()) {
            return false;
        }
        long[] stat = stat(Path.of("/proc", Long.toString(h.pid())));
        return stat[0] != 'Z';
    }

    // The state (field 3) and process group (field 5) of /proc/PID/stat, read after the command
    // name, which is in parentheses and may hold spaces and parentheses itself; {0, -1} for a
    // process gone meanwhile, or no /proc.
    private static long[] stat(Path proc) {
        try {
            String stat = Files.readString(proc.resolve("stat"), StandardCharsets.ISO_8859_1);
            String[] fields = stat.substring(stat.lastIndexOf(')') + 2).split(" ", 4);
            return new long[] {fields[0].charAt(0), Long.parseLong(fields[2])};
        } catch (IOException | RuntimeException e) {
            return new long[] {0, -1};
        }
    }

    private static Optional<Path> find() {
        if (!Files.isDirectory(Path.of("/proc/self"))) {
            return Optional.empty();
        }
        // The system's directories first (a PATH entry cannot shadow them), then PATH, where
        // distributions such as NixOS keep it.
        List<String> dirs = new ArrayList<>(List.of("/usr/bin", "/bin", "/usr/sbin", "/sbin"));
        String path = System.getenv("PATH");
        if (path != null) {
            dirs.addAll(Arrays.asList(path.split(":")));
        }
        for (String dir : dirs) {
            if (dir.isEmpty()) {
                continue; // an empty entry means the working directory: never taken
            }
            Path p = Path.of(dir, "setsid");
            if (Files.isExecutable(p)) {
                return Optional.of(p);
            }
        }
        return Optional.empty();
    }
}
