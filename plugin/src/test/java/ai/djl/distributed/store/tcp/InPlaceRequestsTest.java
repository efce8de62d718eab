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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.time.Duration;
import java.util.Arrays;

/**
 * The server's fast path beside its decoder, on the server's own pipeline: replies keep the order
 * of the requests whichever of the two serves them, however the stream is cut, and malformed input
 * is refused as the decoder refuses it. Expected replies are written out by hand from the protocol.
 */
class InPlaceRequestsTest {

    private static EmbeddedChannel server() {
        StoreRequestDecoder decoder =
                new StoreRequestDecoder(
                        64, 1 << 20, 16, new MemoryBudget(1 << 20), Duration.ofSeconds(30));
        StoreServerHandler handler =
                new StoreServerHandler(
                        new StoreState(),
                        1 << 20,
                        new MemoryBudget(1 << 20),
                        Duration.ofSeconds(30));
        EmbeddedChannel ch =
                new EmbeddedChannel(
                        new InPlaceRequests(decoder, handler, 64, 1 << 20), decoder, handler);
        ch.writeInbound(Unpooled.wrappedBuffer(new Wire().u8(0).get())); // VALIDATE, in 2 reads
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {(byte) 0xCE, (byte) 0xF7, (byte) 0x85}));
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {0x3C}));
        return ch;
    }

    // Requests served by both paths: SET/GET/ADD/CHECK/WAIT on one key go in place when a read
    // starts with them, MULTI_GET, PING, a WAIT on two keys and GETNUMKEYS go through the decoder
    // (and with them the rest of their read).
    private static byte[][] mixedRequests() {
        return new byte[][] {
            new Wire().u8(1).str("/a").str("one").get(), // SET
            new Wire().u8(3).str("/a").get(), // GET: 3 "one"
            new Wire().u8(10).i64(2).str("/a").str("/none").get(), // MULTI_GET: 3 "one", 0 ""
            new Wire().u8(4).str("/n").i64(41).get(), // ADD: 41
            new Wire().u8(13).u8(7).u8(0).u8(0).u8(0).get(), // PING 7: 7 (u32)
            new Wire().u8(4).str("/n").i64(1).get(), // ADD: 42
            new Wire().u8(5).i64(1).str("/missing").get(), // CHECK: 1 (not ready)
            new Wire().u8(6).i64(2).str("/a").str("/n").get(), // WAIT, two present keys: 0
            new Wire().u8(6).i64(1).str("/a").get(), // WAIT on one: 0 (stop waiting)
            new Wire().u8(7).get(), // GETNUMKEYS: 2
            new Wire().u8(3).str("/n").get(), // GET: 2 "42"
            new Wire().u8(6).i64(1).str("/w").get(), // WAIT on a missing key: no reply yet
            new Wire().u8(1).str("/w").str("x").get() // SET that releases it: 0 (stop waiting)
        };
    }

    private static byte[] stream() {
        byte[] all = new byte[0];
        for (byte[] request : mixedRequests()) {
            all = concat(all, request);
        }
        return all;
    }

    private static byte[] expectedReplies() {
        return new Wire()
                .i64(3)
                .u8('o')
                .u8('n')
                .u8('e') // GET
                .i64(3)
                .u8('o')
                .u8('n')
                .u8('e')
                .i64(0) // MULTI_GET
                .i64(41) // ADD
                .u8(7)
                .u8(0)
                .u8(0)
                .u8(0) // PING
                .i64(42) // ADD
                .u8(StoreProtocol.CHECK_NOT_READY)
                .u8(StoreProtocol.STOP_WAITING)
                .u8(StoreProtocol.STOP_WAITING)
                .i64(2) // GETNUMKEYS
                .i64(2)
                .u8('4')
                .u8('2') // GET
                .u8(StoreProtocol.STOP_WAITING) // the WAIT on /w, released by the SET
                .get();
    }

    private static byte[] replies(EmbeddedChannel ch) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (ByteBuf b = ch.readOutbound(); b != null; b = ch.readOutbound()) {
            byte[] bytes = new byte[b.readableBytes()];
            b.readBytes(bytes);
            b.release();
            out.writeBytes(bytes);
        }
        return out.toByteArray();
    }

    @Test
    void repliesKeepTheOrderOfRequestsInOneRead() {
        EmbeddedChannel ch = server();
        ch.writeInbound(Unpooled.wrappedBuffer(stream()));
        assertArrayEquals(expectedReplies(), replies(ch));
        assertTrue(ch.isActive());
        assertFalse(ch.finish());
    }

    @Test
    void eachRequestInARead() {
        EmbeddedChannel ch = server();
        for (byte[] request : mixedRequests()) {
            ch.writeInbound(Unpooled.wrappedBuffer(request));
        }
        assertArrayEquals(expectedReplies(), replies(ch));
        assertFalse(ch.finish());
    }

    @Test
    void everyCutOfTheStreamGivesTheSameReplies() {
        byte[] stream = stream();
        for (int chunk : new int[] {1, 2, 3, 7, 13, 29, 64}) {
            EmbeddedChannel ch = server();
            for (int at = 0; at < stream.length; at += chunk) {
                byte[] piece = Arrays.copyOfRange(stream, at, Math.min(stream.length, at + chunk));
                ch.writeInbound(Unpooled.wrappedBuffer(piece));
            }
            assertArrayEquals(expectedReplies(), replies(ch), "reads of " + chunk + " bytes");
            ch.finishAndReleaseAll();
        }
    }

    @Test
    void aRequestCutByTheReadIsFinishedByTheDecoderBeforeWholeOnesAfterIt() {
        EmbeddedChannel ch = server();
        byte[] set = new Wire().u8(1).str("/k").str("first").get();
        byte[] get = new Wire().u8(3).str("/k").get();
        // a whole GET, then a SET cut in two: the GET after it must see the SET's value
        byte[] one = concat(new Wire().u8(3).str("/k").get(), Arrays.copyOf(set, 5));
        byte[] two = concat(Arrays.copyOfRange(set, 5, set.length), get);
        ch.writeInbound(Unpooled.wrappedBuffer(one));
        ch.writeInbound(Unpooled.wrappedBuffer(two));
        byte[] expected = new Wire().i64(0).i64(5).u8('f').u8('i').u8('r').u8('s').u8('t').get();
        assertArrayEquals(expected, replies(ch));
        ch.finishAndReleaseAll();
    }

    @Test
    void lengthsPastTheLimitsAreRefusedAsTheDecoderRefusesThem() {
        long[] keyLengths = {65, -1, Long.MAX_VALUE};
        for (long length : keyLengths) {
            EmbeddedChannel ch = server();
            byte[] bad = new Wire().u8(3).i64(length).get(); // GET with a key too long
            // The codec's exception goes to the server's handler, last in the pipeline, which
            // closes the connection: it never reaches the caller, and nothing is answered.
            ch.writeInbound(Unpooled.wrappedBuffer(bad));
            assertFalse(ch.isActive(), "key length " + length);
            assertArrayEquals(new byte[0], replies(ch), "key length " + length);
        }
        EmbeddedChannel ch = server();
        byte[] huge = new Wire().u8(1).str("/k").i64((1 << 20) + 1).get(); // SET past the limit
        ch.writeInbound(Unpooled.wrappedBuffer(huge)); // as above
        assertFalse(ch.isActive());
        assertArrayEquals(new byte[0], replies(ch));
    }

    @Test
    void addOnTextClosesTheConnectionAfterTheEarlierReplies() {
        EmbeddedChannel ch = server();
        byte[] requests =
                new Wire()
                        .u8(1)
                        .str("/t")
                        .str("text")
                        .u8(3)
                        .str("/t")
                        .u8(4)
                        .str("/t")
                        .i64(1)
                        .u8(3)
                        .str("/t") // never served: the connection is closed before it
                        .get();
        ch.writeInbound(Unpooled.wrappedBuffer(requests));
        assertFalse(ch.isActive());
        byte[] expected = new Wire().i64(4).u8('t').u8('e').u8('x').u8('t').get();
        byte[] got = replies(ch);
        assertTrue(
                got.length <= expected.length
                        && Arrays.equals(got, Arrays.copyOf(expected, got.length)),
                "nothing but the GET's reply (or a prefix of it) before the close");
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] c = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, c, a.length, b.length);
        return c;
    }
}
