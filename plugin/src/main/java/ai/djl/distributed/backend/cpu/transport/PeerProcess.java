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
package ai.djl.distributed.backend.cpu.transport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Whether a peer's process still runs, for the transports that watch their peers by pid (shared
 * memory, the board, peer memory), whose dead peer stops without closing anything they could see.
 *
 * <p>{@link ProcessHandle#isAlive()} counts a zombie as alive: a process that has exited but that
 * its parent has not yet reaped, which may be never (a parent that does not wait, a launcher that
 * is pid 1 in a container). A peer that crashed would then be waited for until the deadline. So the
 * state is read from {@code /proc/<pid>/stat}, as the launcher's own check does, with its thread
 * count too: a false "dead" here would fail a healthy group.
 */
final class PeerProcess {

    private static final boolean PROC = Files.isReadable(Path.of("/proc/self/stat"));

    private PeerProcess() {}

    /**
     * Returns whether a process runs: it exists and has not exited.
     *
     * @param pid the process id
     * @return {@code false} once it has exited, reaped or not
     */
    static boolean isRunning(long pid) {
        if (!PROC) {
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
        byte[] stat;
        try {
            stat = Files.readAllBytes(Path.of("/proc", Long.toString(pid), "stat"));
        } catch (NoSuchFileException e) {
            return false; // exited and reaped
        } catch (IOException e) {
            // Not ours to read (a hardened /proc): fall back to the kernel's word on the pid.
            return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
        return !hasExited(stat);
    }

    /**
     * Reads the state (field 3) and thread count (field 20) of a {@code /proc/<pid>/stat} line,
     * after the command name, which is in parentheses and may hold spaces and parentheses itself. A
     * zombie ('Z') has exited when it is its only thread: a leader that called {@code pthread_exit}
     * shows 'Z' too while its other threads run on, and such a process still runs.
     */
    private static boolean hasExited(byte[] stat) {
        int i = stat.length - 1;
        while (i >= 0 && stat[i] != ')') {
            i--;
        }
        int field = 3; // the field that starts at i + 2
        int threads = 0;
        byte state = i >= 0 && i + 2 < stat.length ? stat[i + 2] : 0;
        for (int j = i + 2; j < stat.length && field <= 20; j++) {
            byte b = stat[j];
            if (b == ' ') {
                field++;
            } else if (field == 20 && b >= '0' && b <= '9') {
                threads = threads * 10 + (b - '0');
            }
        }
        return state == 'X' || (state == 'Z' && threads <= 1);
    }
}
