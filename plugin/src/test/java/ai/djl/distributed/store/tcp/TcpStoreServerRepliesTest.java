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

import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.ByteBufAllocatorMetric;
import io.netty.buffer.ByteBufAllocatorMetricProvider;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * What one request may make the server hold: replies bounded by the request limit (LIST included),
 * the small replies of a read burst counted against the write watermark like any other, and values
 * that APPEND cannot grow past the request limit.
 */
@Timeout(120)
class TcpStoreServerRepliesTest {

    private static final int MIB = 1 << 20;

    private static TcpStoreServer server(long maxRequestBytes) {
        return TcpStoreServer.builder()
                .optHost("127.0.0.1")
                .optMaxRequestBytes(maxRequestBytes)
                .optDirectConnections(false) // the pipeline: io_uring's own path has its bound
                .build();
    }

    @Test
    void listPastTheReplyLimitClosesThatConnection() throws Exception {
        try (TcpStoreServer server = server(4096);
                RawClient writer = new RawClient(server.getPort())) {
            writer.validate();
            String padding = "p".repeat(92);
            for (int i = 0; i < 10; ++i) {
                writer.u8(1).str("/" + padding + (100 + i)).str("v"); // SET: keys of 96 bytes
            }
            writer.u8(17); // LIST: 8 + 10 * (8 + 96) bytes, within the limit
            assertEquals(10, writer.readI64());
            for (int i = 0; i < 10; ++i) {
                assertEquals(96, writer.readString().length());
            }
            for (int i = 10; i < 64; ++i) {
                writer.u8(1).str("/" + padding + (100 + i)).str("v");
            }
            writer.u8(7); // GETNUMKEYS
            assertEquals(64, writer.readI64());
            try (RawClient lister = new RawClient(server.getPort())) {
                lister.validate().u8(17); // LIST: 6,664 bytes, past the 4,096 of the limit
                assertTrue(lister.closedByServer(), "a LIST past the reply limit was served");
            }
            writer.u8(3).str("/" + padding + 163); // others are served as before
            assertEquals("v", writer.readString());
        }
    }

    @Test
    void appendPastTheRequestLimitClosesThatConnectionAndKeepsTheValue() throws Exception {
        int limit = 64 * 1024;
        byte[] part = new byte[40 * 1024];
        Arrays.fill(part, (byte) 'a');
        try (TcpStoreServer server = server(limit);
                RawClient appender = new RawClient(server.getPort());
                RawClient reader = new RawClient(server.getPort())) {
            appender.validate();
            reader.validate();
            appender.u8(9).str("/small").raw(new Wire().bytes(new byte[10 * 1024]).get());
            appender.u8(9).str("/small").raw(new Wire().bytes(new byte[10 * 1024]).get());
            appender.u8(1).str("/a").raw(new Wire().bytes(part).get()); // SET 40 KiB
            appender.u8(7); // GETNUMKEYS: all three were served
            assertEquals(2, appender.readI64());
            // APPEND of 40 KiB more: a value of 80 KiB, past the 64 KiB any request may carry
            appender.u8(9).str("/a").raw(new Wire().bytes(part).get());
            assertTrue(appender.closedByServer(), "an APPEND past the request limit was served");
            reader.u8(3).str("/a");
            assertEquals(part.length, reader.readI64());
            assertArrayEquals(part, reader.readBytes(part.length));
            reader.u8(3).str("/small");
            assertEquals(20 * 1024, reader.readI64());
        }
    }

    @Test
    void pipelinedSmallRepliesAreHeldBackLikeLargeOnes() throws Exception {
        int clients = 8;
        ByteBufAllocatorMetric metric =
                ((ByteBufAllocatorMetricProvider) ByteBufAllocator.DEFAULT).metric();
        // 200,000 GETs of a 256-byte value: 2.2 MB asked, 53 MB of replies, none ever read
        Wire gets = new Wire();
        for (int i = 0; i < 200_000; ++i) {
            gets.u8(3).str("/k");
        }
        byte[] request = gets.get();
        try (TcpStoreServer server = server(64 * MIB);
                TcpStore good =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(server.getPort())
                                .optTimeout(Duration.ofSeconds(20))
                                .build()) {
            good.set("k", "x".repeat(256));
            long before = metric.usedDirectMemory();
            List<Socket> sockets = new ArrayList<>();
            try {
                for (int c = 0; c < clients; ++c) {
                    Socket socket = new Socket("127.0.0.1", server.getPort());
                    sockets.add(socket);
                    OutputStream out = socket.getOutputStream();
                    Thread writer =
                            new Thread(
                                    () -> {
                                        try {
                                            out.write(new Wire().u8(0).u32(0x3C85F7CE).get());
                                            out.write(request); // blocks once the server stops
                                        } catch (IOException e) {
                                            // the socket is closed below
                                        }
                                    });
                    writer.setDaemon(true);
                    writer.start();
                }
                Thread.sleep(3000);
                long grown = metric.usedDirectMemory() - before;
                System.out.println("replies held for " + clients + " clients: " + (grown >> 20));
                // a 2 MiB write watermark each, and what the kernel takes: about 3 MiB a client
                // here; without counting the gathered replies, up to some 24 MiB a client
                assertTrue(
                        grown < clients * 6L * MIB,
                        "server held " + (grown >> 20) + " MiB of replies");
                // the server still serves others
                good.set("after", "ok");
                assertEquals("ok", good.getString("after"));
            } finally {
                for (Socket s : sockets) {
                    s.close();
                }
            }
        }
    }

    /**
     * A client that pipelines requests after a CANCEL_WAIT reads WAIT_CANCELED before their
     * replies, as PyTorch's server (which answers each request in turn) sends them; the server
     * queues WAIT_CANCELED behind any STOP_WAITING another connection's write queued, and once
     * answered the requests after it first. In both serving paths: the pipeline, and io_uring's own
     * where the transport is io_uring.
     */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void repliesAfterACancelWaitFollowItsReply(boolean direct) throws Exception {
        try (TcpStoreServer server =
                        TcpStoreServer.builder()
                                .optHost("127.0.0.1")
                                .optDirectConnections(direct)
                                .build();
                RawClient client = new RawClient(server.getPort())) {
            client.validate().u8(1).str("/present").raw(new Wire().bytes(new byte[] {7}).get());
            // a WAIT left waiting, then cancelled, with a PING, a GET and a CHECK behind it
            client.u8(6).i64(1).str("/missing").u8(12);
            client.u8(13).u32(0x01020304).u8(3).str("/present").u8(5).i64(1).str("/present");
            byte[] expected = {1, 4, 3, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 7, 0};
            assertArrayEquals(expected, client.readBytes(expected.length), "waiting");
            // a WAIT answered at once, then cancelled: STOP_WAITING, WAIT_CANCELED, then the PING
            client.u8(6).i64(1).str("/present").u8(12).u8(13).u32(0x05060708);
            expected = new byte[] {0, 1, 8, 7, 6, 5};
            assertArrayEquals(expected, client.readBytes(expected.length), "answered");
            // and the connection serves on
            client.u8(13).u32(0x0A0B0C0D);
            assertEquals(0x0A0B0C0DL, client.readU32());
        }
    }
}
