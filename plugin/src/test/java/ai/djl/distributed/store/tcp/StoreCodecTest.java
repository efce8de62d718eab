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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.netty.handler.codec.DecoderException;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** The request codec: exact bytes, byte-at-a-time decoding, and malformed input. */
class StoreCodecTest {

    private static byte[] b(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    private static List<StoreRequest> samples() {
        List<StoreRequest> all = new ArrayList<>();
        all.add(
                new StoreRequest(
                        StoreOpcode.VALIDATE,
                        List.of(),
                        List.of(),
                        StoreProtocol.MAGIC & 0xFFFFFFFFL));
        all.add(new StoreRequest(StoreOpcode.SET, List.of("/k"), List.of(b("v"))));
        all.add(new StoreRequest(StoreOpcode.COMPARE_SET, List.of("/k"), List.of(b(""), b("new"))));
        all.add(new StoreRequest(StoreOpcode.GET, List.of("/k"), List.of()));
        all.add(new StoreRequest(StoreOpcode.ADD, List.of("/c"), List.of(), -42));
        all.add(new StoreRequest(StoreOpcode.CHECK, List.of("/a", "/b"), List.of()));
        all.add(new StoreRequest(StoreOpcode.WAIT, List.of(), List.of()));
        all.add(new StoreRequest(StoreOpcode.GETNUMKEYS, List.of(), List.of()));
        all.add(new StoreRequest(StoreOpcode.DELETE_KEY, List.of("/k"), List.of()));
        all.add(new StoreRequest(StoreOpcode.APPEND, List.of("/k"), List.of(new byte[300])));
        all.add(new StoreRequest(StoreOpcode.MULTI_GET, List.of("/x", "/y", "/z"), List.of()));
        all.add(
                new StoreRequest(
                        StoreOpcode.MULTI_SET, List.of("/x", "/y"), List.of(b("1"), b("22"))));
        all.add(new StoreRequest(StoreOpcode.CANCEL_WAIT, List.of(), List.of()));
        all.add(new StoreRequest(StoreOpcode.PING, List.of(), List.of(), 0xFFFFFFF0L));
        all.add(new StoreRequest(StoreOpcode.QUEUE_PUSH, List.of("/q"), List.of(b("item"))));
        all.add(new StoreRequest(StoreOpcode.QUEUE_POP, List.of("/q"), List.of()));
        all.add(new StoreRequest(StoreOpcode.QUEUE_LEN, List.of("/q"), List.of()));
        all.add(new StoreRequest(StoreOpcode.LIST, List.of(), List.of()));
        return all;
    }

    private static byte[] encode(StoreRequest req) {
        ByteBuf buf = Unpooled.buffer();
        StoreRequestEncoder.write(req, buf);
        byte[] out = new byte[buf.readableBytes()];
        buf.readBytes(out);
        buf.release();
        return out;
    }

    @Test
    void encoderWritesPyTorchLayout() {
        assertArrayEquals(new Wire().u8(0).u32(0x3C85F7CEL).get(), encode(samples().get(0)));
        assertArrayEquals(
                new byte[] {0, (byte) 0xCE, (byte) 0xF7, (byte) 0x85, 0x3C},
                encode(samples().get(0)));
        assertArrayEquals(new Wire().u8(1).str("/k").bytes(b("v")).get(), encode(samples().get(1)));
        assertArrayEquals(
                new Wire().u8(2).str("/k").bytes(b("")).bytes(b("new")).get(),
                encode(samples().get(2)));
        assertArrayEquals(new Wire().u8(4).str("/c").i64(-42).get(), encode(samples().get(4)));
        assertArrayEquals(
                new Wire().u8(5).i64(2).str("/a").str("/b").get(), encode(samples().get(5)));
        assertArrayEquals(new Wire().u8(6).i64(0).get(), encode(samples().get(6)));
        assertArrayEquals(new Wire().u8(7).get(), encode(samples().get(7)));
        assertArrayEquals(
                new Wire().u8(11).i64(2).str("/x").bytes(b("1")).str("/y").bytes(b("22")).get(),
                encode(samples().get(11)));
        assertArrayEquals(new Wire().u8(13).u32(0xFFFFFFF0L).get(), encode(samples().get(13)));
        for (StoreRequest req : samples()) {
            // the size is an allocation hint: it must never be short
            assertTrue(
                    StoreRequestEncoder.encodedSize(req) >= encode(req).length,
                    req.opcode().toString());
        }
    }

    @Test
    void decoderAcceptsOneByteAtATime() {
        EmbeddedChannel ch = new EmbeddedChannel(new StoreRequestDecoder());
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (StoreRequest req : samples()) {
            all.writeBytes(encode(req));
        }
        for (byte x : all.toByteArray()) {
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {x}));
        }
        for (StoreRequest expected : samples()) {
            StoreRequest got = ch.readInbound();
            assertSame(expected, got);
        }
        assertNull(ch.readInbound());
        assertFalse(ch.finish());
    }

    @Test
    void decoderAcceptsManyRequestsInOneBuffer() {
        EmbeddedChannel ch = new EmbeddedChannel(new StoreRequestDecoder());
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        for (StoreRequest req : samples()) {
            all.writeBytes(encode(req));
        }
        ch.writeInbound(Unpooled.wrappedBuffer(all.toByteArray()));
        for (StoreRequest expected : samples()) {
            assertSame(expected, ch.readInbound());
        }
        assertFalse(ch.finish());
    }

    private static void assertSame(StoreRequest expected, StoreRequest got) {
        assertEquals(expected.opcode(), got.opcode());
        assertEquals(expected.keys(), got.keys());
        assertEquals(expected.values().size(), got.values().size());
        for (int i = 0; i < expected.values().size(); ++i) {
            assertArrayEquals(expected.values().get(i), got.values().get(i));
        }
        assertEquals(expected.number(), got.number());
    }

    @Test
    void truncatedInputYieldsNothing() {
        EmbeddedChannel ch = new EmbeddedChannel(new StoreRequestDecoder());
        byte[] set = new Wire().u8(1).str("/key").bytes(b("value")).get();
        for (int cut = 0; cut < set.length; ++cut) {
            ch.writeInbound(Unpooled.wrappedBuffer(VALIDATE));
            ch.readInbound();
            ch.writeInbound(Unpooled.wrappedBuffer(set, 0, cut));
            assertNull(ch.readInbound(), "a request from " + cut + " of " + set.length + " bytes");
            ch.close();
            ch = new EmbeddedChannel(new StoreRequestDecoder());
        }
        assertFalse(ch.finish());
    }

    private static final byte[] VALIDATE = new Wire().u8(0).u32(StoreProtocol.MAGIC).get();

    private static DecoderException rejects(StoreRequestDecoder decoder, byte[] input) {
        EmbeddedChannel ch = new EmbeddedChannel(decoder);
        ch.writeInbound(Unpooled.wrappedBuffer(VALIDATE));
        ch.readInbound();
        DecoderException e =
                assertThrows(
                        DecoderException.class,
                        () -> ch.writeInbound(Unpooled.wrappedBuffer(input)));
        ch.finishAndReleaseAll();
        return e;
    }

    @Test
    void malformedInputIsRejectedBeforeBuffering() {
        assertTrue(
                rejects(new StoreRequestDecoder(), new byte[] {99})
                        .getMessage()
                        .contains("unknown query type 99"));
        // a key length of 2^40 fails as soon as the length is read, without waiting for the bytes
        DecoderException huge =
                rejects(new StoreRequestDecoder(), new Wire().u8(3).i64(1L << 40).get());
        assertTrue(huge.getMessage().contains("key of 1099511627776 bytes"), huge.getMessage());
        // u64 lengths above 2^63 are negative as Java longs: still rejected
        assertTrue(
                rejects(new StoreRequestDecoder(), new Wire().u8(1).i64(-1).get())
                        .getMessage()
                        .contains("18446744073709551615"));
        DecoderException value =
                rejects(
                        new StoreRequestDecoder(16, 64, 8),
                        new Wire().u8(1).str("/k").i64(100).get());
        assertTrue(value.getMessage().contains("more than 64 bytes"), value.getMessage());
        DecoderException count =
                rejects(new StoreRequestDecoder(16, 64, 8), new Wire().u8(6).i64(9).get());
        assertTrue(count.getMessage().contains("9 keys (limit 8)"), count.getMessage());
        // many small values that add up past the request limit
        Wire many = new Wire().u8(11).i64(8);
        for (int i = 0; i < 8; ++i) {
            many.str("/k").bytes(new byte[10]);
        }
        assertTrue(
                rejects(new StoreRequestDecoder(16, 64, 8), many.get())
                        .getMessage()
                        .contains("more than 64 bytes"));
    }

    @Test
    void firstQueryMustBeValidate() {
        EmbeddedChannel ch = new EmbeddedChannel(new StoreRequestDecoder());
        // refused at the opcode, before the 60 MiB the length announces
        DecoderException e =
                assertThrows(
                        DecoderException.class,
                        () ->
                                ch.writeInbound(
                                        Unpooled.wrappedBuffer(
                                                new Wire().u8(1).i64(60L << 20).get())));
        assertTrue(
                e.getMessage().contains("first query is SET, expected VALIDATE"), e.getMessage());
        ch.finishAndReleaseAll();
    }

    @Test
    void inputAfterARejectionIsDiscardedNotDecoded() {
        EmbeddedChannel ch = new EmbeddedChannel(new StoreRequestDecoder(16, 64, 8));
        assertThrows(
                DecoderException.class,
                () -> ch.writeInbound(Unpooled.wrappedBuffer(new Wire().u8(3).i64(1000).get())));
        // well-formed bytes after garbage cannot be trusted to start a request: nothing comes out
        ch.writeInbound(Unpooled.wrappedBuffer(new Wire().u8(3).str("/ok").get()));
        assertNull(ch.readInbound());
        assertFalse(ch.finish());
    }

    private static EmbeddedChannel validated(MemoryBudget budget) {
        EmbeddedChannel ch =
                new EmbeddedChannel(new StoreRequestDecoder(64, 1 << 20, 8, budget, null));
        ch.writeInbound(Unpooled.wrappedBuffer(VALIDATE));
        assertEquals(StoreOpcode.VALIDATE, ((StoreRequest) ch.readInbound()).opcode());
        return ch;
    }

    private static final byte[] LARGE_SET =
            new Wire().u8(1).str("/k").bytes(new byte[100_000]).get();

    @Test
    void aPartialRequestClaimsFromTheBudgetUntilItCompletes() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        EmbeddedChannel ch = validated(budget);
        assertEquals(0, budget.held());
        ch.writeInbound(Unpooled.wrappedBuffer(LARGE_SET, 0, 1000));
        assertNull(ch.readInbound());
        // the claim covers the bytes received, in an array that grows with them (doubling), never
        // the 100,000 the value's length announced
        assertTrue(budget.held() >= 1000 && budget.held() < 10_000, "" + budget.held());
        for (int at = 1000; at < LARGE_SET.length; at += 7000) {
            ch.writeInbound(
                    Unpooled.wrappedBuffer(LARGE_SET, at, Math.min(7000, LARGE_SET.length - at)));
            long received = Math.min(at + 7000, LARGE_SET.length);
            if (received < LARGE_SET.length) {
                assertTrue(
                        budget.held() >= received && budget.held() < 2 * received + 10_000,
                        budget.held() + " bytes held for " + received + " received");
            }
        }
        StoreRequest set = ch.readInbound();
        assertSame(
                new StoreRequest(StoreOpcode.SET, List.of("/k"), List.of(new byte[100_000])), set);
        assertEquals(0, budget.held());
        assertFalse(ch.finish());
    }

    @Test
    void aRequestPastTheSharedBudgetFailsOnlyItsConnection() {
        // each holds what it received; while one copies a read into its value, the read too
        MemoryBudget budget = new MemoryBudget(250_000);
        EmbeddedChannel first = validated(budget);
        EmbeddedChannel second = validated(budget);
        first.writeInbound(Unpooled.wrappedBuffer(LARGE_SET, 0, 90_000));
        long held = budget.held();
        assertTrue(held >= 90_000 && held < 100_000, "" + held);
        DecoderException e =
                assertThrows(
                        DecoderException.class,
                        () -> second.writeInbound(Unpooled.wrappedBuffer(LARGE_SET, 0, 90_000)));
        assertTrue(e.getMessage().contains("past the budget of 250000 bytes"), e.getMessage());
        assertEquals(held, budget.held()); // the refused request claimed nothing
        first.writeInbound(Unpooled.wrappedBuffer(LARGE_SET, 90_000, LARGE_SET.length - 90_000));
        assertEquals(StoreOpcode.SET, ((StoreRequest) first.readInbound()).opcode());
        assertEquals(0, budget.held());
        assertFalse(first.finish());
        second.finishAndReleaseAll();
    }

    @Test
    void aConnectionClosedMidRequestGivesItsClaimBack() {
        MemoryBudget budget = new MemoryBudget(1 << 20);
        EmbeddedChannel ch = validated(budget);
        // a MULTI_SET cut off after its first value: keys and values decoded so far are held too
        byte[] multiSet =
                new Wire().u8(11).i64(2).str("/a").bytes(new byte[5000]).str("/b").i64(9).get();
        ch.writeInbound(Unpooled.wrappedBuffer(multiSet));
        assertTrue(budget.held() >= 5000, "" + budget.held());
        ch.close();
        assertEquals(0, budget.held());
        assertNull(ch.readInbound());
    }
}
