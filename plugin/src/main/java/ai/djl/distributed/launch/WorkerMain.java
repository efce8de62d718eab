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

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * The entry point of every worker JVM that {@code djlrun} starts: {@code WorkerMain CLASS [args]}
 * runs {@code CLASS.main(args)} on the main thread, so the program sees exactly what it would see
 * if started directly (and runs unchanged under torchrun, which starts it directly).
 *
 * <p>Its one addition is a watchdog: if the launcher whose pid is in the system property {@value
 * #AGENT_PID_PROPERTY} dies without stopping its workers (SIGKILL, a crash), the worker stops the
 * processes it started (its descendants and its process group) and exits instead of running on as
 * an orphan. The watchdog is a daemon thread polling every second.
 */
public final class WorkerMain {

    /** The system property holding the launcher's pid. */
    public static final String AGENT_PID_PROPERTY = "ai.djl.distributed.launch.agentPid";

    /**
     * The exit status of a worker whose launcher died: 128 + SIGTERM, as if it had been stopped.
     */
    static final int ORPHAN_EXIT_STATUS = 143;

    private static final long POLL_MILLIS = 1000;

    /** How long the processes of a worker whose launcher died get between SIGTERM and SIGKILL. */
    static final Duration ORPHAN_GRACE = Duration.ofSeconds(5);

    private WorkerMain() {}

    /**
     * Starts the watchdog, then runs the main class; its exceptions propagate unchanged.
     *
     * @param args the main class, then its arguments
     * @throws Throwable whatever the main class throws
     */
    public static void main(String[] args) throws Throwable {
        if (args.length == 0) {
            System.err.println("usage: WorkerMain CLASS [args...] (started by bin/djlrun)");
            System.exit(2);
        }
        watchAgent(System.getProperty(AGENT_PID_PROPERTY));
        Method main = Class.forName(args[0]).getMethod("main", String[].class);
        if (!Modifier.isStatic(main.getModifiers())) {
            throw new IllegalArgumentException(args[0] + ".main(String[]) is not static");
        }
        // As the java launcher does, run the main of a class that is not public (`class Train`).
        main.trySetAccessible();
        try {
            main.invoke(null, (Object) Arrays.copyOfRange(args, 1, args.length));
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    private static void watchAgent(String pid) {
        if (pid == null || pid.isEmpty()) {
            return;
        }
        Optional<ProcessHandle> agent;
        try {
            agent = ProcessHandle.of(Long.parseLong(pid));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(
                    AGENT_PID_PROPERTY + ": '" + pid + "' (expected: the launcher's pid)", e);
        }
        Thread watchdog = new Thread(() -> watch(agent.orElse(null), pid), "djlrun-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
    }

    /**
     * Stops the processes this worker started: its descendants and, as the leader of a process
     * group of its own (started through setsid), the group's other members, which include children
     * whose parent has exited (init's since). SIGTERM, then SIGKILL to whatever is left after
     * {@link #ORPHAN_GRACE}: nobody else is left to stop one that ignores SIGTERM.
     */
    static void stopOwnProcesses() {
        List<ProcessHandle> own = ownProcesses();
        if (own.isEmpty()) {
            return;
        }
        own.forEach(ProcessHandle::destroy);
        long deadline = System.nanoTime() + ORPHAN_GRACE.toNanos();
        try {
            while (own.stream().anyMatch(ProcessGroups::running)
                    && System.nanoTime() - deadline < 0) {
                Thread.sleep(50);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        // found again: one may have started others meanwhile
        ownProcesses().forEach(ProcessHandle::destroyForcibly);
    }

    private static List<ProcessHandle> ownProcesses() {
        ProcessHandle self = ProcessHandle.current();
        List<ProcessHandle> all = new ArrayList<>();
        self.descendants().forEach(all::add);
        all.addAll(ProcessGroups.members(self));
        all.removeIf(h -> h.equals(self) || !ProcessGroups.running(h));
        return all.stream().distinct().collect(Collectors.toList());
    }

    private static void watch(ProcessHandle agent, String pid) {
        try {
            // Not isAlive(): a launcher killed and not yet reaped by its parent is a zombie,
            // which Java counts as alive, and its workers would run on for as long.
            while (agent != null && ProcessGroups.running(agent)) {
                Thread.sleep(POLL_MILLIS);
            }
        } catch (InterruptedException e) {
            return;
        }
        System.err.println("djlrun worker: the launcher (pid " + pid + ") is gone; exiting");
        // The processes this worker started go too: nobody else is left to stop them.
        stopOwnProcesses();
        // exit runs the program's shutdown hooks; halt if they hang
        Thread halt =
                new Thread(
                        () -> {
                            try {
                                Thread.sleep(30_000);
                            } catch (InterruptedException e) {
                                return;
                            }
                            Runtime.getRuntime().halt(ORPHAN_EXIT_STATUS);
                        },
                        "djlrun-watchdog-halt");
        halt.setDaemon(true);
        halt.start();
        System.exit(ORPHAN_EXIT_STATUS);
    }
}
