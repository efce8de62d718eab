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
package ai.djl.distributed.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.FileStore;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

/** Init methods with PyTorch's semantics and messages, and ranks that really meet through them. */
@Timeout(60)
class RendezvousTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(20);

    private static int freePort() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static DistributedEnv env(String... kv) {
        Map<String, String> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return DistributedEnv.of(m);
    }

    private static String fails(String url, int rank, int world, DistributedEnv env) {
        return assertThrows(
                        IllegalArgumentException.class,
                        () -> Rendezvous.create(url, rank, world, TIMEOUT, env))
                .getMessage();
    }

    @Test
    void errorsAreThoseOfPyTorch() {
        DistributedEnv none = env();
        assertEquals("No rendezvous handler for foo://", fails("foo://x", 0, 1, none));
        assertEquals(
                "Error initializing torch.distributed using env:// rendezvous: environment"
                        + " variable RANK expected, but not set",
                fails("env://", -1, -1, none));
        assertTrue(fails("env://", 0, -1, none).contains("variable WORLD_SIZE expected"));
        assertTrue(fails("env://", 0, 2, none).contains("variable MASTER_ADDR expected"));
        assertTrue(
                fails("env://", 0, 2, env("MASTER_ADDR", "127.0.0.1"))
                        .contains("variable MASTER_PORT expected"));
        // torch 2.6's texts, from its rendezvous.py (ValueError)
        String tcp = "Error initializing torch.distributed using tcp:// rendezvous: ";
        String file = "Error initializing torch.distributed using file:// rendezvous: ";
        assertEquals(
                tcp + "port number missing",
                fails("tcp://127.0.0.1?rank=0&world_size=1", -1, -1, none));
        assertEquals(
                tcp + "port number missing",
                fails("tcp://127.0.0.1:?rank=0&world_size=1", -1, -1, none));
        // urlparse's port 0 is falsy: rank 0 would serve where no other rank could find it
        assertEquals(
                tcp + "port number missing",
                fails("tcp://127.0.0.1:0?rank=0&world_size=2", -1, -1, none));
        assertEquals(
                tcp + "rank parameter missing",
                fails("tcp://127.0.0.1:1234?world_size=1", -1, -1, none));
        assertEquals(
                tcp + "world size parameter missing",
                fails("tcp://127.0.0.1:1234?rank=0", -1, -1, none));
        assertEquals(file + "path missing", fails("file://?rank=0&world_size=1", -1, -1, none));
        assertEquals(
                file + "rank parameter missing", fails("file:///tmp/x?world_size=1", -1, -1, none));
        // urlparse cuts the fragment off first: the query inside it is no query
        assertEquals(
                file + "rank parameter missing",
                fails("file:///tmp/x#f?rank=0&world_size=1", -1, -1, none));
        assertTrue(
                fails("tcp://127.0.0.1:1234?rank=0&world_size=2", 0, 2, none)
                        .contains("has node-specific arguments(rank, world_size) already"));
        assertTrue(
                fails("env://", 0, 2, env("MASTER_ADDR", "h", "MASTER_PORT", "70000"))
                        .contains("port must have value from 0 to 65535"));
        assertTrue(
                fails("env://", 2, 2, env("MASTER_ADDR", "h", "MASTER_PORT", "1"))
                        .contains("rank: 2 (expected: 0 to world_size - 1 = 1)"));
        assertTrue(
                fails("env://", -1, -1, env("RANK", "zero"))
                        .contains("RANK: 'zero' (expected: an integer)"));
        assertTrue(fails("", 0, 1, none).contains("initMethod"));
    }

    @Test
    void anEnvironmentWithANullIsRefusedNamingIt() {
        Map<String, String> m = new HashMap<>();
        m.put("RANK", null);
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> DistributedEnv.of(m));
        assertTrue(e.getMessage().startsWith("variables: RANK=null"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> DistributedEnv.of(null));
    }

    private static List<Rendezvous.Result> join(int world, IntFunction<Rendezvous.Result> rank)
            throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(world);
        try {
            List<Future<Rendezvous.Result>> futures = new ArrayList<>();
            for (int r = 0; r < world; ++r) {
                int me = r;
                futures.add(pool.submit(() -> rank.apply(me)));
            }
            List<Rendezvous.Result> results = new ArrayList<>();
            for (Future<Rendezvous.Result> f : futures) {
                results.add(f.get(40, TimeUnit.SECONDS));
            }
            return results;
        } finally {
            pool.shutdownNow();
        }
    }

    private static void assertShared(List<Rendezvous.Result> ranks) {
        int world = ranks.size();
        for (int r = 0; r < world; ++r) {
            assertEquals(r, ranks.get(r).rank());
            assertEquals(world, ranks.get(r).worldSize());
            ranks.get(r).store().set("from/" + r, "rank " + r);
        }
        for (Rendezvous.Result me : ranks) {
            for (int r = 0; r < world; ++r) {
                assertEquals("rank " + r, me.store().getString("from/" + r));
            }
        }
    }

    @Test
    void envRanksMeetOnRankZerosStore() throws Exception {
        int port = freePort();
        List<Rendezvous.Result> ranks =
                join(
                        3,
                        r ->
                                Rendezvous.create(
                                        "env://",
                                        -1,
                                        -1,
                                        TIMEOUT,
                                        env(
                                                "RANK",
                                                Integer.toString(r),
                                                "WORLD_SIZE",
                                                "3",
                                                "MASTER_ADDR",
                                                "127.0.0.1",
                                                "MASTER_PORT",
                                                Integer.toString(port))));
        try {
            assertShared(ranks);
            assertTrue(((TcpStore) ranks.get(0).store()).isServer());
            assertFalse(((TcpStore) ranks.get(1).store()).isServer());
        } finally {
            for (int r = ranks.size() - 1; r >= 0; --r) {
                ranks.get(r).close();
            }
        }
    }

    @Test
    void tcpRanksTakeRankAndWorldSizeFromArgumentsOrQuery() throws Exception {
        int port = freePort();
        List<Rendezvous.Result> ranks =
                join(
                        2,
                        r ->
                                r == 0
                                        ? Rendezvous.create(
                                                "tcp://127.0.0.1:" + port, 0, 2, TIMEOUT, env())
                                        : Rendezvous.create(
                                                "tcp://127.0.0.1:" + port + "?rank=1&world_size=2",
                                                -1,
                                                -1,
                                                TIMEOUT,
                                                env()));
        try {
            assertShared(ranks);
        } finally {
            ranks.get(1).close();
            ranks.get(0).close();
        }
    }

    @Test
    void fileRanksShareAFileRemovedByTheLast(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("rdzv");
        List<Rendezvous.Result> ranks =
                join(
                        2,
                        r ->
                                Rendezvous.create(
                                        "file://" + file + "?rank=" + r + "&world_size=2",
                                        -1,
                                        -1,
                                        TIMEOUT,
                                        env()));
        assertTrue(ranks.get(0).store() instanceof FileStore);
        assertShared(ranks);
        ranks.get(0).close();
        assertTrue(Files.exists(file));
        ranks.get(1).close();
        assertFalse(Files.exists(file), "the last of world_size ranks removes the file");
    }

    @Test
    void urlsAreSplitAsPythonsUrlparseSplitsThem(@TempDir Path dir) {
        Path file = dir.resolve("rdzv");
        // urlparse lowers the scheme and cuts off the fragment: torch 2.6 opens .../rdzv here
        try (Rendezvous.Result rank =
                Rendezvous.create(
                        "FILE://" + file + "?rank=0&world_size=1#part", -1, -1, TIMEOUT, env())) {
            assertTrue(rank.store() instanceof FileStore);
            assertEquals(1, rank.worldSize());
            assertTrue(Files.exists(file), "the file is the path without the fragment");
        }
        assertFalse(Files.exists(file), "the only rank removed it");
    }

    /**
     * Joins {@code world} ranks of attempt {@code attempt} on the agent's store at {@code port}.
     */
    private static List<Rendezvous.Result> joinAgent(int port, int world, int attempt)
            throws Exception {
        return join(
                world,
                r ->
                        Rendezvous.create(
                                "env://",
                                -1,
                                -1,
                                TIMEOUT,
                                env(
                                        "RANK", Integer.toString(r),
                                        "WORLD_SIZE", Integer.toString(world),
                                        "MASTER_ADDR", "127.0.0.1",
                                        "MASTER_PORT", Integer.toString(port),
                                        "TORCHELASTIC_USE_AGENT_STORE", "True",
                                        "TORCHELASTIC_RESTART_COUNT", Integer.toString(attempt))));
    }

    private static TcpStore client(Rendezvous.Result rank) {
        return (TcpStore) ((PrefixStore) rank.store()).getUnderlyingNonPrefixStore();
    }

    @Test
    void underTorchrunsAgentStoreEveryRankIsAClient() throws Exception {
        try (TcpStoreServer agent = TcpStoreServer.builder().optHost("127.0.0.1").build()) {
            List<Rendezvous.Result> ranks = joinAgent(agent.getPort(), 2, 0);
            try {
                assertShared(ranks);
                assertFalse(client(ranks.get(0)).isServer());
                assertEquals(2, agent.joinedWorkers());
            } finally {
                ranks.forEach(Rendezvous.Result::close);
            }
            assertFalse(agent.isClosed(), "the agent's store outlives the workers");
        }
    }

    @Test
    void underTheAgentStoreEachAttemptHasItsOwnKeysWithPyTorchsPrefix() throws Exception {
        try (TcpStoreServer agent = TcpStoreServer.builder().optHost("127.0.0.1").build();
                TcpStore raw =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(agent.getPort())
                                .optTimeout(TIMEOUT)
                                .build()) {
            List<Rendezvous.Result> first = joinAgent(agent.getPort(), 2, 0);
            first.get(0).store().set("default_pg/0/addr", "attempt 0");
            first.forEach(Rendezvous.Result::close);
            List<Rendezvous.Result> second = joinAgent(agent.getPort(), 2, 3);
            try {
                // PyTorch 1.13 to 2.3: PrefixStore(f"/worker/attempt_{attempt}", TCPStore(...)).
                assertEquals(
                        "/worker/attempt_3", ((PrefixStore) second.get(1).store()).getPrefix());
                assertFalse(
                        second.get(1).store().check(List.of("default_pg/0/addr")),
                        "a restarted attempt sees the keys of an earlier one");
                second.get(1).store().set("default_pg/0/addr", "attempt 3");
                assertEquals("attempt 0", raw.getString("/worker/attempt_0/default_pg/0/addr"));
                assertEquals("attempt 3", raw.getString("/worker/attempt_3/default_pg/0/addr"));
            } finally {
                second.forEach(Rendezvous.Result::close);
            }
            TcpStore closed = client(second.get(0));
            assertThrows(
                    IllegalStateException.class,
                    () -> closed.set("after", "close"),
                    "closing the result closes the client below the prefix");
        }
    }

    @Test
    void theAgentStoreNeedsTheRestartCount() {
        String message =
                fails(
                        "env://",
                        0,
                        1,
                        env(
                                "MASTER_ADDR", "127.0.0.1",
                                "MASTER_PORT", "1",
                                "TORCHELASTIC_USE_AGENT_STORE", "True"));
        assertTrue(message.startsWith("TORCHELASTIC_RESTART_COUNT: not set"), message);
        assertTrue(
                fails(
                                "env://",
                                0,
                                1,
                                env(
                                        "MASTER_ADDR", "127.0.0.1",
                                        "MASTER_PORT", "1",
                                        "TORCHELASTIC_USE_AGENT_STORE", "True",
                                        "TORCHELASTIC_RESTART_COUNT", "-1"))
                        .contains("TORCHELASTIC_RESTART_COUNT: -1 (expected: 0 or more)"));
    }
}
