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
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.tcp.StoreTls;
import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TlsFiles;

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
 * A guarded store through {@code bin/djlrun}: with {@code DJL_DIST_STORE_SECRET}, or with the
 * {@code DJL_DIST_STORE_TLS_*} variables, set, the launcher's agent store requires the secret, or
 * TLS and each worker's certificate (a client without them is refused), and its workers, which get
 * the variables through the environment, pass; the secret is never printed.
 */
class GuardedStoreDjlrunTest {

    private static final String SECRET = "djlrun-secret-7f3a9c";
    private static final Pattern JOINED = Pattern.compile("rank (\\d) joined as (\\d) of 2");

    /** A worker: joins a counter on the launcher's agent store, then waits for everyone. */
    public static final class Worker {

        private Worker() {}

        /**
         * Runs one rank.
         *
         * @param args {@code secret} or {@code tls}: what a client lacks to be refused
         */
        public static void main(String[] args) {
            String host = System.getenv("MASTER_ADDR");
            int port = Integer.parseInt(System.getenv("MASTER_PORT"));
            boolean tls = args[0].equals("tls");
            TcpStore.Builder intruder =
                    TcpStore.builder()
                            .setHost(host)
                            .setPort(port)
                            .optTimeout(Duration.ofSeconds(60));
            try (TcpStore in =
                    tls ? intruder.optTls(null).build() : intruder.optSecret(null).build()) {
                System.out.println("a client without the " + args[0] + " got in: " + in);
            } catch (StoreException e) {
                String expected = tls ? "requires TLS" : "requires a store secret";
                System.out.println("refused: " + e.getMessage().contains(expected));
            }
            try (TcpStore store =
                    TcpStore.builder()
                            .setHost(host)
                            .setPort(port)
                            .optTimeout(Duration.ofSeconds(60))
                            .build()) {
                long joined = store.add("guarded-test/joined", 1);
                if (joined == Integer.parseInt(System.getenv("WORLD_SIZE"))) {
                    store.set("guarded-test/all", new byte[] {1});
                }
                store.waitFor(List.of("guarded-test/all"));
                System.out.println(
                        "rank " + System.getenv("RANK") + " joined as " + joined + " of 2");
            }
        }
    }

    @Test
    @Timeout(120)
    void workersUnderDjlrunShareTheSecretWithoutPrintingIt(@TempDir Path dir) throws Exception {
        String log = runGuarded(dir, Map.of("DJL_DIST_STORE_SECRET", SECRET), "secret");
        // The check below sees INFO lines too: the agent store's guard line is one (the examples'
        // logging configuration once hid every INFO line of ai.djl.distributed).
        assertTrue(
                log.contains("INFO ai.djl.distributed.store.tcp.TcpStoreServer - TcpStoreServer(")
                        && log.contains("no TLS, store secret required"),
                "no INFO line of the agent store: " + log);
        assertFalse(log.contains(SECRET), "the secret was printed: " + log);
    }

    @Test
    @Timeout(120)
    void workersUnderDjlrunMeetOverTls(@TempDir Path dir) throws Exception {
        TlsFiles files = TlsFiles.make(dir.resolve("tls"), "djlrun-test-ca");
        runGuarded(
                dir,
                Map.of(
                        StoreTls.CERT_ENV, files.chain.toString(),
                        StoreTls.KEY_ENV, files.key.toString(),
                        StoreTls.CA_ENV, files.authority.toString()),
                "tls");
    }

    /** Runs two workers under djlrun with {@code env}; checks both joined and both were refused. */
    private static String runGuarded(Path dir, Map<String, String> env, String guard)
            throws Exception {
        Djlrun.Run run;
        try (Djlrun.Job job =
                Djlrun.start(dir, 2, Djlrun.WORKER_JVM, env, Worker.class.getName(), guard)) {
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
        // the agent store is guarded: each worker's client without the guard was refused
        assertEquals(
                2,
                Pattern.compile("refused: true").matcher(run.log()).results().count(),
                run.log());
        return run.log();
    }
}
