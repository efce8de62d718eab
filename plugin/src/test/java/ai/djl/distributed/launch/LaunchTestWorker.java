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

import ai.djl.distributed.rendezvous.Rendezvous;
import ai.djl.distributed.store.Store;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The worker of the launcher's tests: runs its arguments as steps, in order.
 *
 * <ul>
 *   <li>{@code env}: prints a line {@code ENV K=V K=V...} of torchrun's variables, a line {@code
 *       MALLOC K=V...} of the glibc malloc variables, a line {@code PROP K=V K=V} of DJL's thread
 *       properties and {@code PID n}; {@code envkeys}: a line {@code ENVKEYS K K...} of every
 *       variable's name;
 *   <li>{@code store}: rendezvous through {@code env://}, publish a value and read every rank's;
 *       prints {@code STORE rank=R world=W saw=[...]};
 *   <li>{@code fail:RANK:CODE}: rank RANK exits with CODE; {@code fail-first:RANK:CODE} only while
 *       TORCHELASTIC_RESTART_COUNT is 0;
 *   <li>{@code sleep:SECONDS}: sleeps; {@code await:PATH}: prints {@code AWAITING} and waits until
 *       the file PATH exists (exits with 3 after 120 s); {@code stderr:TEXT}: prints TEXT on
 *       stderr; {@code partial:TEXT}: prints TEXT with no newline;
 *   <li>{@code child}: starts {@code sleep 300} and prints {@code CHILD pid}; {@code orphan}:
 *       starts {@code sleep 300} through a shell that exits at once (the sleep is then init's, in
 *       the worker's process group) and prints {@code CHILD pid}; {@code stubborn}: starts {@code
 *       sleep 300} ignoring SIGTERM and prints {@code CHILD pid}.
 * </ul>
 */
public final class LaunchTestWorker {

    /** The variables a worker gets from torchrun (TORCHELASTIC_ERROR_FILE aside). */
    public static final List<String> TORCHRUN_VARIABLES =
            List.of(
                    "LOCAL_RANK",
                    "RANK",
                    "GROUP_RANK",
                    "ROLE_RANK",
                    "ROLE_NAME",
                    "LOCAL_WORLD_SIZE",
                    "WORLD_SIZE",
                    "GROUP_WORLD_SIZE",
                    "ROLE_WORLD_SIZE",
                    "MASTER_ADDR",
                    "MASTER_PORT",
                    "TORCHELASTIC_RESTART_COUNT",
                    "TORCHELASTIC_MAX_RESTARTS",
                    "TORCHELASTIC_RUN_ID",
                    "TORCHELASTIC_USE_AGENT_STORE",
                    "TORCH_NCCL_ASYNC_ERROR_HANDLING",
                    "OMP_NUM_THREADS");

    private static final Duration AWAIT_LIMIT = Duration.ofSeconds(120);

    private LaunchTestWorker() {}

    /**
     * Runs the steps.
     *
     * @param args the steps
     * @throws Exception if a step fails
     */
    public static void main(String[] args) throws Exception {
        for (String step : args) {
            String[] p = step.split(":", 3);
            switch (p[0]) {
                case "env":
                    printEnv();
                    break;
                case "envkeys":
                    System.out.println(
                            "ENVKEYS " + String.join(" ", new TreeMap<>(System.getenv()).keySet()));
                    break;
                case "store":
                    exchange();
                    break;
                case "fail":
                case "fail-first":
                    boolean first = "0".equals(System.getenv("TORCHELASTIC_RESTART_COUNT"));
                    if (p[1].equals(System.getenv("RANK")) && (p[0].equals("fail") || first)) {
                        System.out.println("FAILING with " + p[2]);
                        System.exit(Integer.parseInt(p[2]));
                    }
                    break;
                case "sleep":
                    System.out.println("SLEEPING");
                    Thread.sleep((long) (Double.parseDouble(p[1]) * 1000));
                    break;
                case "await":
                    awaitFile(Path.of(p[1]));
                    break;
                case "child":
                    // a process of the worker's own, as a data loader or a shell-out would be
                    Process child = new ProcessBuilder("sleep", "300").start();
                    System.out.println("CHILD " + child.pid());
                    break;
                case "orphan":
                    Process sh =
                            new ProcessBuilder(
                                            "sh",
                                            "-c",
                                            "sleep 300 </dev/null >/dev/null 2>&1 & echo $!")
                                    .start();
                    String orphan =
                            new String(sh.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                    sh.waitFor();
                    System.out.println("CHILD " + orphan.trim());
                    break;
                case "zombie":
                    // a grandchild that exits at once, init's: a zombie until init reaps it
                    new ProcessBuilder("sh", "-c", "sleep 0.1 </dev/null >/dev/null 2>&1 &")
                            .start()
                            .waitFor();
                    break;
                case "stubborn":
                    // an ignored signal stays ignored across exec
                    Process stubborn =
                            new ProcessBuilder("sh", "-c", "trap '' TERM; exec sleep 300").start();
                    System.out.println("CHILD " + stubborn.pid());
                    break;
                case "stderr":
                    System.err.println(p[1]);
                    break;
                case "partial":
                    System.out.print(p[1]);
                    System.out.flush();
                    break;
                default:
                    throw new IllegalArgumentException("unknown step: " + step);
            }
        }
    }

    // What the test decides, rather than a guess at how long it takes: bounded all the same.
    private static void awaitFile(Path file) throws InterruptedException {
        System.out.println("AWAITING");
        long deadline = System.nanoTime() + AWAIT_LIMIT.toNanos();
        while (!Files.exists(file)) {
            if (System.nanoTime() - deadline >= 0) {
                System.out.println("AWAITED " + file + " in vain for " + AWAIT_LIMIT);
                System.exit(3);
            }
            Thread.sleep(20);
        }
    }

    private static void printEnv() {
        Map<String, String> env = new TreeMap<>();
        for (String name : TORCHRUN_VARIABLES) {
            String v = System.getenv(name);
            if (v != null) {
                env.put(name, v);
            }
        }
        StringBuilder out = new StringBuilder("ENV");
        env.forEach((k, v) -> out.append(' ').append(k).append('=').append(v));
        out.append("\nMALLOC");
        new TreeMap<>(System.getenv())
                .forEach(
                        (k, v) -> {
                            if (k.startsWith("MALLOC_") || k.equals("GLIBC_TUNABLES")) {
                                out.append(' ').append(k).append('=').append(v);
                            }
                        });
        out.append("\nPROP");
        for (String p :
                List.of("ai.djl.pytorch.num_threads", "ai.djl.pytorch.num_interop_threads")) {
            out.append(' ').append(p).append('=').append(System.getProperty(p));
        }
        out.append("\nPID ").append(ProcessHandle.current().pid());
        System.out.println(out);
    }

    private static void exchange() {
        try (Rendezvous.Result job = Rendezvous.create("env://", -1, -1, Duration.ofSeconds(60))) {
            Store store = job.store();
            String attempt = System.getenv("TORCHELASTIC_RESTART_COUNT");
            store.set("hello/" + attempt + "/" + job.rank(), "from " + job.rank());
            List<String> saw = new ArrayList<>();
            for (int r = 0; r < job.worldSize(); ++r) {
                saw.add(store.getString("hello/" + attempt + "/" + r));
            }
            System.out.println(
                    "STORE rank=" + job.rank() + " world=" + job.worldSize() + " saw=" + saw);
        }
    }
}
