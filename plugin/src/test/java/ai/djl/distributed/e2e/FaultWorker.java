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
package ai.djl.distributed.e2e;

import ai.djl.Device;
import ai.djl.distributed.ReduceOp;
import ai.djl.distributed.Work;
import ai.djl.distributed.pg.Distributed;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.distributed.pg.ProcessGroups;
import ai.djl.distributed.rendezvous.Rendezvous;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.NDManager;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A worker of the end-to-end fault suite, run under a real {@code djlrun}: runs its arguments as
 * steps, in order, on a world group (the transport from {@code DJL_DIST_TRANSPORT}, the group
 * timeout from {@code FAULT_TIMEOUT_MS}, default 60 s).
 *
 * <p>Without {@code group:} steps the worker runs one world, made as users make it ({@code
 * Distributed.initProcessGroup}), and a failed step ends it: it prints {@code FAILED}, tries one
 * more all-reduce ({@code NEXT}), and exits 3. With them, each {@code group:NAME} step starts a
 * scenario: a fresh world on {@code PrefixStore(NAME, store)} of one {@code env://} rendezvous; a
 * failed step then skips to the next scenario, and the worker exits 3 at the end if any failed.
 *
 * <p>Every line it prints starts with a word the tests look for: {@code PID n}, {@code READY},
 * {@code OK what}, {@code FAILED scenario after MS ms at EPOCH_MS: exception: message}, {@code NEXT
 * scenario after MS ms: ...} (or {@code NEXT scenario succeeded}), {@code DONE rank r}.
 *
 * <ul>
 *   <li>{@code allreduce:COUNT}: all-reduces COUNT float32 values, rank r holding {@code r + 1 +
 *       i}, and checks the sum against its closed form; prints {@code OK allreduce COUNT};
 *   <li>{@code loop:COUNT}: prints {@code READY}, then all-reduces COUNT values until that fails;
 *   <li>{@code fail:RANK:CODE}: rank RANK exits with CODE; {@code fail-first:RANK:CODE} only in
 *       attempt 0 (TORCHELASTIC_RESTART_COUNT);
 *   <li>{@code late:RANK:MS}: rank RANK sleeps MS;
 *   <li>{@code mismatch:KIND:COUNT}: an all-reduce of COUNT values where rank 1 differs from the
 *       others in KIND: {@code op} (MAX instead of SUM), {@code size} (one more value) or {@code
 *       type} (float64);
 *   <li>{@code interrupt:MS}: rank 0 waits for an all-reduce and a thread interrupts it after MS
 *       ms; the other ranks skip the step;
 *   <li>with a store (in a scenario): {@code port} prints {@code PORT} and the launcher store's
 *       port; {@code storeops-until:KEY} prints {@code READY}, then sets, reads back and adds on
 *       the store until KEY exists ({@code OK storeops ROUNDS}); {@code block:KEY} prints {@code
 *       READY} and waits for KEY.
 * </ul>
 */
public final class FaultWorker {

    /** Counted down once a failure is reported: a SIGTERM from the launcher waits for it. */
    private static final CountDownLatch REPORTED = new CountDownLatch(1);

    private static final Path OUT =
            System.getenv("FAULT_OUT") == null
                    ? null
                    : Path.of(System.getenv("FAULT_OUT"), "rank" + System.getenv("RANK") + ".log");

    private FaultWorker() {}

    /**
     * Prints a line, and appends it to {@code $FAULT_OUT/rank<RANK>.log} when FAULT_OUT is set: the
     * launcher relays a worker's output, and a test that kills the launcher reads the file.
     */
    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
        if (OUT != null) {
            try {
                Files.writeString(
                        OUT, line + "\n", StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }

    /**
     * Runs the steps.
     *
     * @param args the steps
     * @throws Exception if a step fails in a way the suite does not expect
     */
    public static void main(String[] args) throws Exception {
        // When a peer dies, the launcher stops this worker at once (as torchrun does): a worker
        // that is failing too gets a few seconds to say how, as a training script logs on SIGTERM.
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    try {
                                        REPORTED.await(3, TimeUnit.SECONDS);
                                    } catch (InterruptedException e) {
                                        Thread.currentThread().interrupt();
                                    }
                                }));
        say("PID " + ProcessHandle.current().pid());
        Duration timeout =
                Duration.ofMillis(
                        Long.parseLong(System.getenv().getOrDefault("FAULT_TIMEOUT_MS", "60000")));
        boolean scenarios = args.length > 0 && args[0].startsWith("group:");
        boolean failed = false;
        try (NDManager m = NDManager.newBaseManager(Device.cpu())) {
            if (!scenarios) {
                ProcessGroup g = Distributed.initProcessGroup("cpu", "env://", -1, -1, timeout);
                try {
                    failed = !runAll(args, 0, args.length, "default", g, m, null);
                } finally {
                    Distributed.destroyProcessGroup();
                }
                if (failed) {
                    exit(3);
                }
            } else {
                try (Rendezvous.Result job = Rendezvous.create("env://", -1, -1, timeout)) {
                    for (int i = 0; i < args.length; ) {
                        int end = i + 1;
                        while (end < args.length && !args[end].startsWith("group:")) {
                            end++;
                        }
                        String name = args[i].substring("group:".length());
                        try (ProcessGroup g =
                                ProcessGroups.init(
                                        "cpu",
                                        new PrefixStore(name, job.store()),
                                        job.rank(),
                                        job.worldSize(),
                                        timeout)) {
                            failed |= !runAll(args, i + 1, end, name, g, m, job.store());
                        }
                        i = end;
                    }
                    // No rank exits before every rank is done: a worker that exits non-zero
                    // makes the launcher stop the others, perhaps mid-scenario.
                    if (job.store().add("ended", 1) == job.worldSize()) {
                        job.store().set("all-ended", "");
                    }
                    job.store().waitFor(List.of("all-ended"), timeout.multipliedBy(4));
                }
            }
            say((failed ? "ENDED rank " : "DONE rank ") + System.getenv("RANK"));
        }
        exit(failed ? 3 : 0);
    }

    private static void exit(int code) {
        System.out.flush();
        Runtime.getRuntime().halt(code);
    }

    /** Runs steps {@code [from, to)} on one group; false if one failed (the rest are skipped). */
    private static boolean runAll(
            String[] args,
            int from,
            int to,
            String scenario,
            ProcessGroup g,
            NDManager m,
            Store store)
            throws Exception {
        for (int i = from; i < to; i++) {
            long begun = System.nanoTime();
            try {
                run(args[i].split(":"), g, m, store);
            } catch (RuntimeException e) {
                report("FAILED " + scenario, begun, e);
                long next = System.nanoTime();
                try {
                    g.allReduce(m.ones(new Shape(4)));
                    say("NEXT " + scenario + " succeeded");
                } catch (RuntimeException again) {
                    report("NEXT " + scenario, next, again);
                }
                REPORTED.countDown();
                return false;
            }
        }
        return true;
    }

    private static void report(String what, long since, RuntimeException e) {
        long ms = (System.nanoTime() - since) / 1_000_000;
        say(
                what
                        + " after "
                        + ms
                        + " ms at "
                        + System.currentTimeMillis()
                        + ": "
                        + e.getClass().getSimpleName()
                        + ": "
                        + e.getMessage());
        System.out.flush();
    }

    /** All-reduces forever: the test kills this worker, or a peer's death makes it throw. */
    private static void allReduceUntilKilled(ProcessGroup g, NDManager m, int n) {
        while (true) {
            allReduce(g, m, n);
        }
    }

    private static void run(String[] p, ProcessGroup g, NDManager m, Store store) throws Exception {
        int rank = g.getRank();
        switch (p[0]) {
            case "allreduce":
                allReduce(g, m, Integer.parseInt(p[1]));
                say("OK allreduce " + p[1]);
                break;
            case "loop":
                say("READY");
                System.out.flush();
                allReduceUntilKilled(g, m, Integer.parseInt(p[1]));
                break;
            case "fail":
            case "fail-first":
                boolean first = "0".equals(System.getenv("TORCHELASTIC_RESTART_COUNT"));
                if (Integer.parseInt(p[1]) == rank && (p[0].equals("fail") || first)) {
                    say("EXITING with " + p[2]);
                    System.out.flush();
                    System.exit(Integer.parseInt(p[2]));
                }
                break;
            case "late":
                if (Integer.parseInt(p[1]) == rank) {
                    Thread.sleep(Long.parseLong(p[2]));
                }
                break;
            case "mismatch":
                mismatch(g, m, p[1], Integer.parseInt(p[2]));
                break;
            case "interrupt":
                if (rank == 0) {
                    interrupt(g, m, Long.parseLong(p[1]));
                }
                break;
            case "port":
                say("PORT " + System.getenv("MASTER_PORT"));
                break;
            case "storeops-until":
                say("OK storeops " + storeOps(store, rank, p[1]));
                break;
            case "block":
                say("READY");
                System.out.flush();
                store.get(p[1]);
                break;
            default:
                throw new IllegalArgumentException("unknown step: " + String.join(":", p));
        }
        System.out.flush();
    }

    /** All-reduces rank + 1 + i and checks every element against n(n+1)/2 + n i. */
    private static void allReduce(ProcessGroup g, NDManager m, int count) {
        int n = g.getSize();
        try (NDArray a = m.arange(0f, (float) count).add(g.getRank() + 1)) {
            g.allReduce(a, ReduceOp.SUM);
            float[] got = a.toFloatArray();
            for (int i = 0; i < count; i++) {
                float want = n * (n + 1) / 2f + (float) n * i;
                if (got[i] != want) {
                    throw new AssertionError(
                            "element " + i + ": " + got[i] + " (want " + want + ")");
                }
            }
        }
    }

    /** Sets, reads back and adds until {@code stop} exists; returns the rounds. */
    private static long storeOps(Store store, int rank, String stop) {
        say("READY");
        System.out.flush();
        long rounds = 0;
        while (!store.check(List.of(stop))) {
            String key = "ops/" + rank + "/" + rounds % 16;
            String value = "v" + rounds;
            store.set(key, value);
            if (!value.equals(store.getString(key))) {
                throw new AssertionError(key + " did not read back " + value);
            }
            if (store.add("ops/count/" + rank, 1) != rounds + 1) {
                throw new AssertionError("ops/count/" + rank + " is not " + (rounds + 1));
            }
            rounds++;
        }
        return rounds;
    }

    private static void mismatch(ProcessGroup g, NDManager m, String kind, int count) {
        boolean odd = g.getRank() == 1;
        ReduceOp op = odd && kind.equals("op") ? ReduceOp.MAX : ReduceOp.SUM;
        int size = odd && kind.equals("size") ? count + 1 : count;
        DataType type = odd && kind.equals("type") ? DataType.FLOAT64 : DataType.FLOAT32;
        try (NDArray a = m.ones(new Shape(size), type)) {
            g.allReduce(a, op);
        }
    }

    private static void interrupt(ProcessGroup g, NDManager m, long afterMs) throws Exception {
        Thread main = Thread.currentThread();
        Thread interrupter =
                new Thread(
                        () -> {
                            try {
                                Thread.sleep(afterMs);
                            } catch (InterruptedException e) {
                                return;
                            }
                            main.interrupt();
                        });
        interrupter.start();
        try (NDArray a = m.ones(new Shape(1024))) {
            Work w = g.allReduceAsync(a, ReduceOp.SUM);
            w.waitFor();
        } finally {
            interrupter.interrupt();
            interrupter.join();
            Thread.interrupted(); // the next steps run uninterrupted
        }
    }
}
