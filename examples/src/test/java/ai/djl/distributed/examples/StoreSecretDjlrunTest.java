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

import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.tcp.TcpStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * An authenticated store through {@code bin/djlrun}: with {@code DJL_DIST_STORE_SECRET} set, the
 * launcher's agent store requires it (a client without it is refused) and its workers, which get it
 * through the environment, pass; the secret is never printed.
 */
class StoreSecretDjlrunTest {

    private static final String SECRET = "djlrun-secret-7f3a9c";
    private static final Pattern JOINED = Pattern.compile("rank (\\d) joined as (\\d) of 2");

    /** A worker: joins a counter on the launcher's agent store, then waits for everyone. */
    public static final class Worker {

        private Worker() {}

        /**
         * Runs one rank.
         *
         * @param args unused
         */
        public static void main(String[] args) {
            String host = System.getenv("MASTER_ADDR");
            int port = Integer.parseInt(System.getenv("MASTER_PORT"));
            try (TcpStore intruder =
                    TcpStore.builder()
                            .setHost(host)
                            .setPort(port)
                            .optTimeout(Duration.ofSeconds(60))
                            .optSecret(null)
                            .build()) {
                System.out.println("a client without the secret got in: " + intruder);
            } catch (StoreException e) {
                System.out.println(
                        "refused without the secret: "
                                + e.getMessage().contains("requires a store secret"));
            }
            try (TcpStore store =
                    TcpStore.builder()
                            .setHost(host)
                            .setPort(port)
                            .optTimeout(Duration.ofSeconds(60))
                            .build()) {
                long joined = store.add("secret-test/joined", 1);
                if (joined == Integer.parseInt(System.getenv("WORLD_SIZE"))) {
                    store.set("secret-test/all", new byte[] {1});
                }
                store.waitFor(List.of("secret-test/all"));
                System.out.println(
                        "rank " + System.getenv("RANK") + " joined as " + joined + " of 2");
            }
        }
    }

    @Test
    @Timeout(120)
    void workersUnderDjlrunShareTheSecretWithoutPrintingIt(@TempDir Path dir) throws Exception {
        Djlrun.Run run;
        try (Djlrun.Job job =
                Djlrun.start(
                        dir,
                        2,
                        Djlrun.WORKER_JVM,
                        Map.of("DJL_DIST_STORE_SECRET", SECRET),
                        Worker.class.getName())) {
            run = job.await(100);
        }
        assertEquals(0, run.exitCode(), run.log());
        Matcher m = JOINED.matcher(run.log());
        int lines = 0;
        long sum = 0;
        while (m.find()) {
            ++lines;
            sum += Long.parseLong(m.group(2));
        }
        assertEquals(2, lines, run.log());
        assertEquals(1 + 2, sum, "each worker got its own count: " + run.log());
        assertFalse(run.log().contains(SECRET), "the secret was printed: " + run.log());
        // the agent store requires the secret: each worker's client without it was refused
        assertEquals(
                2,
                Pattern.compile("refused without the secret: true")
                        .matcher(run.log())
                        .results()
                        .count(),
                run.log());
    }
}
