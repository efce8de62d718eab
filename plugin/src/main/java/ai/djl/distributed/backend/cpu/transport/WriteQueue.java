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
package ai.djl.distributed.backend.cpu.transport;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.backend.cpu.transport.Link.OutFrame;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * The frames queued to one peer, written in order as the stream takes them; a frame's transfer is
 * finished once all its bytes have gone. Not thread-safe: guarded by its {@link Link}'s lock.
 */
final class WriteQueue {

    private final Link.Channel channel;
    private final Settlements settlements;
    private final ArrayDeque<OutFrame> out = new ArrayDeque<>();

    WriteQueue(Link.Channel channel, Settlements settlements) {
        this.channel = channel;
        this.settlements = settlements;
    }

    void add(OutFrame frame) {
        out.add(frame);
    }

    boolean isEmpty() {
        return out.isEmpty();
    }

    /**
     * Writes queued frames until the stream is full or the queue empty.
     *
     * @throws IOException if the stream failed
     */
    void flush() throws IOException {
        while (!out.isEmpty()) {
            OutFrame f = out.peek();
            channel.write(f.buffers());
            if (!written(f.buffers())) {
                return;
            }
            out.poll();
            if (f.transfer() != null) {
                settlements.finished(f.transfer());
            }
        }
    }

    /**
     * Fails every queued frame's transfer and empties the queue.
     *
     * @param e why
     */
    void failAll(CommunicationException e) {
        for (OutFrame f : out) {
            if (f.transfer() != null) {
                settlements.failed(f.transfer(), e);
            }
        }
        out.clear();
    }

    /** Whether every buffer of a frame has gone: its body may be empty while its header is not. */
    private static boolean written(ByteBuffer[] buffers) {
        for (ByteBuffer b : buffers) {
            if (b.hasRemaining()) {
                return false;
            }
        }
        return true;
    }
}
