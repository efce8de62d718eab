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
package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

import ai.djl.distributed.DistributedException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The replicas' meeting and the main store's lifetime, with two leaders in this JVM: the host's and
 * replica 1's, each on its own connection to the server the host runs.
 */
@Timeout(60)
class MainStoreTest {

    private static ReplicaGroupsOptions options(int replica, int port, String timeout) {
        return ReplicaGroupsOptions.parse(
                "--replica-id",
                "" + replica,
                "--num-replicas",
                "2",
                "--main-store",
                "127.0.0.1:" + port,
                "--timeout",
                timeout);
    }

    /** Both leaders announce themselves, each with its world size; returns once both have. */
    private static void arrive(MainStore host, int hostSize, MainStore other, int otherSize)
            throws Exception {
        CompletableFuture<Void> hostArrives =
                CompletableFuture.runAsync(() -> host.arrive(hostSize));
        other.arrive(otherSize);
        hostArrives.get(60, TimeUnit.SECONDS);
    }

    @Test
    void theHostKeepsServingUntilEveryReplicaHasFinished() throws Exception {
        try (MainStore host = MainStore.join(options(0, 0, "30"))) {
            int port = Integer.parseInt(host.endpoint().substring("127.0.0.1:".length()));
            try (MainStore other = MainStore.join(options(1, port, "30"))) {
                arrive(host, 2, other, 2);
                host.finish();
                CompletableFuture<Void> awaited = CompletableFuture.runAsync(host::awaitFinished);
                Thread.sleep(300);
                assertFalse(awaited.isDone(), "the host stopped waiting before replica 1 finished");
                other.finish();
                awaited.get(20, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void aReplicaThatNeverFinishesFailsTheHostAtTheTimeout() throws Exception {
        try (MainStore host = MainStore.join(options(0, 0, "1"))) {
            int port = Integer.parseInt(host.endpoint().substring("127.0.0.1:".length()));
            try (MainStore other = MainStore.join(options(1, port, "1"))) {
                arrive(host, 2, other, 2);
                host.finish();
                String message =
                        assertThrows(DistributedException.class, host::awaitFinished).getMessage();
                assertEquals(
                        "replica 0: replica 1 did not finish with the main store within 1 s (main"
                                + " store "
                                + host.endpoint()
                                + ")",
                        message);
            }
        }
    }

    @Test
    void replicasOfDifferentSizesAreRefusedNamingBoth() {
        try (MainStore host = MainStore.join(options(0, 0, "30"))) {
            int port = Integer.parseInt(host.endpoint().substring("127.0.0.1:".length()));
            try (MainStore other = MainStore.join(options(1, port, "30"))) {
                CompletableFuture<Void> hostArrives =
                        CompletableFuture.runAsync(() -> host.arrive(2));
                String message =
                        assertThrows(DistributedException.class, () -> other.arrive(3))
                                .getMessage();
                assertEquals(
                        "replica 1: replica 0 runs 2 rank(s), this one 3 (expected: the same"
                                + " --nproc-per-node for every replica)",
                        message);
                Throwable hostFailure =
                        assertThrows(
                                        ExecutionException.class,
                                        () -> hostArrives.get(60, TimeUnit.SECONDS))
                                .getCause();
                assertEquals(
                        "replica 0: replica 1 runs 3 rank(s), this one 2 (expected: the same"
                                + " --nproc-per-node for every replica)",
                        hostFailure.getMessage());
            }
        }
    }
}
