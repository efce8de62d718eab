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
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.tcp.PendingCall.Reply;
import ai.djl.distributed.store.tcp.PendingCall.WaitResult;

import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;

import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;

/** The client's reply matching: each reply shape, one byte at a time, and the WAIT/CANCEL race. */
class StoreResponseDecoderTest {

    private final Queue<PendingCall> pending = new ConcurrentLinkedQueue<>();
    private final EmbeddedChannel ch =
            new EmbeddedChannel(new StoreResponseDecoder(pending, "test:1"));

    private PendingCall expect(Reply reply, int count) {
        // the query only names the call in failure messages
        StoreRequest query = new StoreRequest(StoreOpcode.GET, List.of("/k"), List.of());
        PendingCall call = new PendingCall(reply, count, query);
        pending.add(call);
        return call;
    }

    /**
     * What a call was answered with; the embedded channel decodes on the caller's thread, so the
     * answer is there once the bytes are in, and a call still waiting fails the test at once.
     */
    private static Object done(PendingCall call) throws ExecutionException, InterruptedException {
        assertTrue(call.future.isDone(), "the call is still waiting for its reply");
        return call.future.get();
    }

    private void feedByteByByte(byte[] bytes) {
        for (byte x : bytes) {
            ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {x}));
        }
    }

    private static byte[] le(long v, int size) {
        ByteBuffer b = ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v);
        byte[] out = new byte[size];
        System.arraycopy(b.array(), 0, out, 0, size);
        return out;
    }

    private static byte[] cat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        ByteBuffer b = ByteBuffer.allocate(n);
        for (byte[] p : parts) {
            b.put(p);
        }
        return b.array();
    }

    @Test
    void everyReplyShapeDecodesByteByByte() throws Exception {
        PendingCall i64 = expect(Reply.I64, 0);
        PendingCall u8 = expect(Reply.U8, 0);
        PendingCall u32 = expect(Reply.U32, 0);
        PendingCall bytes = expect(Reply.BYTES, 0);
        PendingCall multi = expect(Reply.MULTI_BYTES, 2);
        PendingCall popEmpty = expect(Reply.QUEUE_POP, 0);
        PendingCall pop = expect(Reply.QUEUE_POP, 0);
        feedByteByByte(
                cat(
                        le(-7, 8),
                        new byte[] {1},
                        le(0xFFFFFFFEL, 4),
                        le(3, 8),
                        new byte[] {'a', 'b', 'c'},
                        le(0, 8),
                        le(1, 8),
                        new byte[] {'z'},
                        le(0, 8),
                        le(2, 8),
                        le(2, 8),
                        new byte[] {'h', 'i'}));
        assertEquals(-7L, done(i64));
        assertEquals(1, done(u8));
        assertEquals(0xFFFFFFFEL, done(u32));
        assertArrayEquals(new byte[] {'a', 'b', 'c'}, (byte[]) done(bytes));
        @SuppressWarnings("unchecked")
        List<byte[]> values = (List<byte[]>) done(multi);
        assertArrayEquals(new byte[0], values.get(0));
        assertArrayEquals(new byte[] {'z'}, values.get(1));
        assertEquals(0, ((byte[][]) done(popEmpty)).length);
        assertArrayEquals(new byte[] {'h', 'i'}, ((byte[][]) done(pop))[0]);
        assertTrue(pending.isEmpty());
        assertFalse(ch.finish());
    }

    @Test
    void waitCancelledBeforeTheKeyCameAnswersBoth() throws Exception {
        PendingCall wait = expect(Reply.WAIT, 0);
        PendingCall cancel = expect(Reply.CANCEL, 0);
        feedByteByByte(new byte[] {StoreProtocol.WAIT_CANCELED});
        assertEquals(WaitResult.CANCELED, done(wait));
        assertEquals(WaitResult.CANCELED, done(cancel));
        assertTrue(pending.isEmpty());
    }

    @Test
    void keyThatLandedDuringCancelStopsTheWaitFirst() throws Exception {
        PendingCall wait = expect(Reply.WAIT, 0);
        PendingCall cancel = expect(Reply.CANCEL, 0);
        PendingCall next = expect(Reply.I64, 0);
        feedByteByByte(
                cat(
                        new byte[] {StoreProtocol.STOP_WAITING, StoreProtocol.WAIT_CANCELED},
                        le(5, 8)));
        assertEquals(WaitResult.STOPPED, done(wait));
        assertEquals(WaitResult.CANCELED, done(cancel));
        assertEquals(5L, done(next));
    }

    @Test
    void unexpectedBytesAndClosingFailPendingCalls() {
        ch.writeInbound(Unpooled.wrappedBuffer(new byte[] {1, 2}));
        assertFalse(ch.isActive(), "unexpected bytes close the connection");
        EmbeddedChannel other = new EmbeddedChannel(new StoreResponseDecoder(pending, "peer:9"));
        PendingCall call = expect(Reply.BYTES, 0);
        other.close();
        ExecutionException e =
                org.junit.jupiter.api.Assertions.assertThrows(
                        ExecutionException.class, () -> done(call));
        assertTrue(e.getCause() instanceof StoreException);
        assertTrue(e.getCause().getMessage().contains("peer:9"), e.getCause().getMessage());
    }
}
