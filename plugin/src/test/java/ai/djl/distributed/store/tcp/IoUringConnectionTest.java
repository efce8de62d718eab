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
package ai.djl.distributed.store.tcp;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.Arrays;
import java.util.function.IntSupplier;

/**
 * Connections served straight from io_uring ({@link IoUringConnection}) over real sockets: the
 * replies are PyTorch's and in the order of the requests, whichever requests the connection serves
 * itself and wherever it hands over to its pipeline; WAITs are woken and cancelled; a client that
 * does not read is held back, not dropped; the pipeline's limits and timeout still apply after a
 * hand-over; and closing the server ends these connections too. Expected replies are written out by
 * hand from the protocol.
 */
class IoUringConnectionTest {

    @BeforeAll
    static void ioUringOnly() {
        // the direct path exists only on io_uring, the transport picked wherever the kernel has it
        assumeTrue("io_uring".equals(NettyTransport.name()), "io_uring is not available here");
    }

    private static TcpStoreServer server() {
        return TcpStoreServer.builder().optHost("127.0.0.1").optDirectConnections(true).build();
    }

    // Waits until the count reaches the expected value: connections change hands on their loop.
    private static void awaitCount(int expected, IntSupplier count) throws InterruptedException {
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (count.getAsInt() != expected && System.nanoTime() < deadline) {
            Thread.sleep(2);
        }
        assertEquals(expected, count.getAsInt());
    }

    // Served here: SET, GET, ADD, PING, CHECK and WAIT on one key; MULTI_GET and GETNUMKEYS are
    // the pipeline's, and the first of them hands the connection over.
    private static byte[][] mixedRequests() {
        return new byte[][] {
            new Wire().u8(1).str("/a").str("one").get(), // SET
            new Wire().u8(3).str("/a").get(), // GET: 3 "one"
            new Wire().u8(4).str("/n").i64(41).get(), // ADD: 41
            new Wire().u8(13).u32(7).get(), // PING 7: 7 (u32)
            new Wire().u8(5).i64(1).str("/missing").get(), // CHECK: 1 (not ready)
            new Wire().u8(6).i64(1).str("/a").get(), // WAIT on a present key: 0 (stop waiting)
            new Wire().u8(10).i64(2).str("/a").str("/none").get(), // MULTI_GET: 3 "one", 0 ""
            new Wire().u8(4).str("/n").i64(1).get(), // ADD: 42
            new Wire().u8(7).get(), // GETNUMKEYS: 3
            new Wire().u8(3).str("/n").get() // GET: 2 "42"
        };
    }

    private static byte[] expectedReplies() {
        return new Wire()
                .str("one") // GET
                .i64(41) // ADD
                .u32(7) // PING
                .u8(StoreProtocol.CHECK_NOT_READY)
                .u8(StoreProtocol.STOP_WAITING) // WAIT
                .str("one")
                .i64(0) // MULTI_GET
                .i64(42) // ADD
                .i64(2) // GETNUMKEYS
                .str("42") // GET
                .get();
    }

    private static byte[] concat(byte[][] parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] part : parts) {
            out.writeBytes(part);
        }
        return out.toByteArray();
    }

    @Test
    void steadyStateQueriesAreServedWithoutAPipeline() throws Exception {
        try (TcpStoreServer server = server();
                RawClient client = new RawClient(server.getPort())) {
            client.validate().u8(1).str("/k").str("v").flush();
            awaitCount(1, server::directConnections);
            client.u8(3).str("/k");
            assertEquals("v", client.readString());
            client.u8(4).str("/c").i64(5);
            assertEquals(5, client.readI64());
            client.u8(6).i64(1).str("/k");
            assertEquals(StoreProtocol.STOP_WAITING, client.readU8());
            assertEquals(1, server.directConnections()); // none of these moved it
        }
    }

    @Test
    void repliesKeepTheOrderOfRequestsWhereverTheStreamIsCut() throws Exception {
        byte[] stream = concat(mixedRequests());
        // every request boundary, and cuts inside a key, a value and a count
        int[] cuts = new int[mixedRequests().length + 3];
        int at = 0;
        for (int i = 0; i < mixedRequests().length; ++i) {
            cuts[i] = at;
            at += mixedRequests()[i].length;
        }
        cuts[cuts.length - 3] = 11; // inside SET's value length
        cuts[cuts.length - 2] = 25; // inside GET's key
        cuts[cuts.length - 1] = 60; // inside CHECK's count
        for (int cut : cuts) {
            try (TcpStoreServer server = server();
                    RawClient client = new RawClient(server.getPort())) {
                client.validate().raw(Arrays.copyOf(stream, cut)).flush();
                Thread.sleep(20); // so the rest comes in a read of its own
                client.raw(Arrays.copyOfRange(stream, cut, stream.length));
                byte[] replies = client.readBytes(expectedReplies().length);
                assertArrayEquals(expectedReplies(), replies, "cut at byte " + cut);
                assertEquals(-1, client.readWithin(50), "cut at byte " + cut);
                awaitCount(0, server::directConnections); // MULTI_GET moved it, at the latest
            }
        }
    }

    @Test
    void waitIsWokenByAnotherClientAndCanBeCancelled() throws Exception {
        try (TcpStoreServer server = server();
                RawClient waiting = new RawClient(server.getPort());
                RawClient writer = new RawClient(server.getPort())) {
            waiting.validate().u8(6).i64(1).str("/k");
            assertEquals(-1, waiting.readWithin(200));
            writer.validate().u8(1).str("/k").str("v").flush();
            assertEquals(StoreProtocol.STOP_WAITING, waiting.readU8());

            waiting.u8(6).i64(1).str("/later").u8(12); // WAIT, then CANCEL_WAIT
            assertEquals(StoreProtocol.WAIT_CANCELED, waiting.readU8());
            writer.u8(1).str("/later").str("v").flush();
            assertEquals(-1, waiting.readWithin(200)); // the cancelled WAIT stays silent
            waiting.u8(3).str("/later");
            assertEquals("v", waiting.readString());
            assertEquals(2, server.directConnections());
        }
    }

    @Test
    void aWaitStillWaitingMovesWithTheConnection() throws Exception {
        try (TcpStoreServer server = server();
                RawClient waiting = new RawClient(server.getPort());
                RawClient cut = new RawClient(server.getPort());
                RawClient writer = new RawClient(server.getPort())) {
            waiting.validate().u8(6).i64(1).str("/k").u8(7); // WAIT, then GETNUMKEYS
            assertEquals(0, waiting.readI64()); // served by the pipeline while the WAIT waits
            cut.validate().u8(6).i64(1).str("/k").u8(4).i64(2).flush(); // WAIT, then half an ADD
            awaitCount(1, server::directConnections); // both moved: the writer's is left
            writer.validate().u8(1).str("/k").str("v").flush();
            assertEquals(StoreProtocol.STOP_WAITING, waiting.readU8());
            assertEquals(StoreProtocol.STOP_WAITING, cut.readU8());
            cut.raw(new byte[] {'/', 'c'}).i64(7);
            assertEquals(7, cut.readI64()); // the rest of the ADD
            assertEquals(-1, waiting.readWithin(100));
            awaitCount(1, server::directConnections); // the writer's
        }
    }

    @Test
    void largeRequestsAndRefusalsGoToThePipeline() throws Exception {
        byte[] large = new byte[100_000];
        for (int i = 0; i < large.length; ++i) {
            large[i] = (byte) (i * 31);
        }
        try (TcpStoreServer server = server();
                RawClient client = new RawClient(server.getPort());
                RawClient refused = new RawClient(server.getPort())) {
            client.validate()
                    .u8(1)
                    .str("/big")
                    .raw(new Wire().bytes(large).get())
                    .u8(3)
                    .str("/big");
            assertEquals(large.length, client.readI64());
            assertArrayEquals(large, client.readBytes(large.length));
            client.u8(4).str("/c").i64(2);
            assertEquals(2, client.readI64()); // still served, by the pipeline

            refused.validate().u8(1).str("/text").str("abc").u8(4).str("/text").i64(1).flush();
            assertTrue(refused.closedByServer()); // ADD on a value that is not a number
            client.u8(3).str("/text");
            assertEquals("abc", client.readString());
            assertEquals(0, server.directConnections());
        }
    }

    // A read timeout short enough for a test
    private static TcpStoreServer impatientServer() {
        return TcpStoreServer.builder()
                .optHost("127.0.0.1")
                .optDirectConnections(true)
                .optReadTimeout(Duration.ofMillis(300))
                .build();
    }

    @Test
    void requestLeftHalfSentMeetsThePipelinesReadTimeout() throws Exception {
        try (TcpStoreServer server = impatientServer();
                RawClient client = new RawClient(server.getPort())) {
            client.validate().u8(3).str("/k").u8(1).i64(2).flush(); // GET, half a SET
            assertEquals("", client.readString());
            long start = System.nanoTime();
            assertTrue(client.closedByServer());
            assertTrue(System.nanoTime() - start < 5_000_000_000L);
            awaitCount(0, server::directConnections);
        }
    }

    @Test
    void requestCutByAFullBufferMeetsTheReadTimeoutToo() throws Exception {
        int gets = IoUringConnection.READ_BYTES / 11; // GET "/k" is 11 bytes
        try (TcpStoreServer server = impatientServer();
                RawClient client = new RawClient(server.getPort())) {
            client.validate().flush();
            awaitCount(1, server::directConnections);
            for (int i = 0; i < gets; ++i) {
                client.u8(3).str("/k");
            }
            // 4,092 bytes so far: the buffer fills up inside the next GET's key length, and the
            // client sends no more
            client.u8(3).raw(new byte[] {2, 0, 0}).flush();
            for (int i = 0; i < gets; ++i) {
                assertEquals("", client.readString(), "reply " + i);
            }
            long start = System.nanoTime();
            assertTrue(client.closedByServer()); // wherever the reads cut it, within the timeout
            assertTrue(System.nanoTime() - start < 5_000_000_000L);
            awaitCount(0, server::directConnections);
        }
    }

    @Test
    void clientThatReadsLateGetsEveryReply() throws Exception {
        byte[] value = new byte[3000]; // a SET that fits in the read buffer
        Arrays.fill(value, (byte) 'v');
        int gets = 10_000; // 30 MB of replies, far past the socket buffers and the reply queue
        try (TcpStoreServer server = server();
                RawClient client = new RawClient(server.getPort())) {
            client.validate().u8(1).str("/v").raw(new Wire().bytes(value).get()).flush();
            for (int i = 0; i < gets; ++i) {
                client.u8(3).str("/v");
            }
            client.flush();
            Thread.sleep(200); // the server fills the socket, then holds the rest back
            for (int i = 0; i < gets; ++i) {
                assertEquals(value.length, client.readI64(), "reply " + i);
                assertArrayEquals(value, client.readBytes(value.length), "reply " + i);
            }
            assertEquals(1, server.directConnections());
        }
    }

    @Test
    void closingTheServerEndsItsDirectConnections() throws Exception {
        TcpStoreServer server = server();
        try (RawClient idle = new RawClient(server.getPort());
                RawClient waiting = new RawClient(server.getPort())) {
            idle.validate().u8(1).str("/k").str("v").flush();
            waiting.validate().u8(6).i64(1).str("/never").flush();
            awaitCount(2, server::directConnections);
            server.close();
            assertEquals(0, server.directConnections());
            assertTrue(idle.closedByServer());
            assertTrue(waiting.closedByServer());
        } finally {
            server.close();
        }
    }

    @Test
    void turnedOffEveryConnectionUsesItsPipeline() throws Exception {
        try (TcpStoreServer server =
                        TcpStoreServer.builder()
                                .optHost("127.0.0.1")
                                .optDirectConnections(false)
                                .build();
                RawClient client = new RawClient(server.getPort())) {
            client.validate().u8(4).str("/c").i64(3);
            assertEquals(3, client.readI64());
            assertEquals(0, server.directConnections());
        }
    }

    @Test
    void clientsThatLeaveTakeTheirWaitsWithThem() throws Exception {
        try (TcpStoreServer server = server()) {
            try (RawClient waiting = new RawClient(server.getPort())) {
                waiting.validate().u8(6).i64(1).str("/k").flush();
                awaitCount(1, server::directConnections);
            }
            awaitCount(0, server::directConnections);
            try (RawClient writer = new RawClient(server.getPort())) {
                writer.validate().u8(1).str("/k").str("v").u8(3).str("/k");
                assertEquals("v", writer.readString()); // the write woke no one, and failed nothing
            }
        }
    }
}
