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

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;

import java.util.concurrent.Executor;

/**
 * The wait state of one connection: which keys its WAIT still misses. Guarded by the {@link
 * StoreState} lock; {@link #wake()} may be called from any thread.
 */
final class Waiter {

    private static final ByteBuf STOP_WAITING =
            Unpooled.unreleasableBuffer(
                    Unpooled.directBuffer(1).writeByte(StoreProtocol.STOP_WAITING).asReadOnly());

    private final Executor loop;
    private final Runnable stopWaiting;
    // the first registration of each WAIT, reused: a WAIT on one key allocates nothing
    final StoreState.Registration own = new StoreState.Registration(this);
    StoreState.Registration registrations; // of the WAIT, the latest first; null when not waiting
    int missing; // how many of its keys have not been written yet; 0 when not waiting

    /**
     * Creates the waiter of a connection.
     *
     * @param loop the connection's event loop
     * @param stopWaiting writes STOP_WAITING to the connection; run on {@code loop}
     */
    Waiter(Executor loop, Runnable stopWaiting) {
        this.loop = loop;
        this.stopWaiting = stopWaiting;
    }

    /** Creates the waiter of a channel: STOP_WAITING goes through its pipeline. */
    static Waiter of(Channel channel) {
        return new Waiter(
                channel.eventLoop(), () -> channel.writeAndFlush(STOP_WAITING.duplicate()));
    }

    /**
     * Queues STOP_WAITING on the connection's event loop. Called under the {@link StoreState} lock,
     * always through the loop's task queue, so a CANCEL_WAIT reply (also queued there, after the
     * lock) can never overtake it.
     */
    void wake() {
        loop.execute(stopWaiting);
    }
}
