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
package ai.djl.distributed.fsdp;

import ai.djl.Model;
import ai.djl.distributed.pg.Distributed;
import ai.djl.distributed.pg.ProcessGroup;
import ai.djl.ndarray.NDManager;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A worker for {@link FsdpKillTest}, run under a real {@code djlrun}: trains the test GPT with
 * {@code FULL_SHARD} until something fails, printing {@code PID n} and {@code READY} (after its
 * first step), then {@code FAILED at EPOCH_MS: message} (every cause's message) and exiting 3. The
 * group timeout comes from {@code FSDP_TIMEOUT_MS}.
 */
public final class FsdpKillWorker {

    /** Counted down once a failure is reported: a SIGTERM from the launcher waits for it. */
    private static final CountDownLatch REPORTED = new CountDownLatch(1);

    private FsdpKillWorker() {}

    /**
     * Trains until a step fails.
     *
     * @param args none
     */
    public static void main(String[] args) {
        // When a peer dies the launcher stops this worker (as torchrun does): give it a few
        // seconds to say how it failed, as a training script logs on SIGTERM.
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
        System.out.println("PID " + ProcessHandle.current().pid());
        Duration timeout =
                Duration.ofMillis(
                        Long.parseLong(System.getenv().getOrDefault("FSDP_TIMEOUT_MS", "60000")));
        ProcessGroup group = Distributed.initProcessGroup("cpu", "env://", -1, -1, timeout);
        try (Model model = Fixture.gptModel(0);
                NDManager m = NDManager.newBaseManager();
                FullyShardedDataParallel t =
                        Fixture.fsdp(model, group, FullyShardedDataParallel.builder())) {
            for (int step = 0; step < 1_000_000; step++) {
                try (NDManager sm = m.newSubManager()) {
                    Fixture.backward(t, Fixture.tokens(sm, step % 7, group.getRank(), 4));
                    t.step();
                }
                if (step == 0) {
                    System.out.println("READY");
                    System.out.flush();
                }
            }
        } catch (RuntimeException e) {
            StringBuilder why = new StringBuilder();
            for (Throwable c = e; c != null; c = c.getCause()) {
                why.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
                why.append(" / ");
            }
            System.out.println("FAILED at " + System.currentTimeMillis() + ": " + why);
            System.out.flush();
            REPORTED.countDown();
            Runtime.getRuntime().halt(3);
        }
        Runtime.getRuntime().halt(0);
    }
}
