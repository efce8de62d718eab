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

import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.StoreTimeoutException;
import ai.djl.distributed.store.Stores;
import ai.djl.distributed.store.tcp.PendingCall.WaitResult;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The calls of one {@link TcpStore} on its connection: one at a time, as PyTorch's client makes
 * them; each query with the typed reply of its opcode ({@link ReplyType}); WAIT followed by
 * CANCEL_WAIT when it times out; the blocking queue pop. Thread-safe: a call waits for the one in
 * progress, but never longer than the store timeout.
 */
final class StoreClient implements AutoCloseable {

    private final String store; // names the store in errors, as its toString() does
    private final StoreConnection connection;
    private final ReentrantLock lock = new ReentrantLock();
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Duration timeout;

    /**
     * Makes the calls of a store on a connection, which it then owns.
     *
     * @param store the store, as its {@code toString()} describes it
     * @param connection the connection to the server
     * @param timeout the store timeout: the bound of each call and of waiting for the connection
     */
    StoreClient(String store, StoreConnection connection, Duration timeout) {
        this.store = store;
        this.connection = connection;
        this.timeout = timeout;
    }

    /**
     * Returns the store timeout, which bounds each call and the wait for the connection.
     *
     * @return the timeout
     */
    Duration timeout() {
        return timeout;
    }

    /**
     * Sets the store timeout for the calls that start after this one.
     *
     * @param timeout a positive duration, already checked by the store
     */
    void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }

    /**
     * Sends a query and blocks for its reply, for at most the store timeout.
     *
     * @param request the query
     * @param reply the reply type of its opcode
     * @param <T> the type of the reply
     * @return the reply ({@code null} for {@link ReplyType#NONE})
     * @throws StoreException if the connection failed or no reply came in time
     * @throws IllegalStateException if the store is closed
     */
    <T> T call(StoreRequest request, ReplyType<T> reply) {
        lockConnection();
        try {
            return callLocked(request, reply, timeout);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for keys, then sends a query, holding the connection in between, as PyTorch's client
     * does for GET and MULTI_GET so that the query never misses a key.
     *
     * @param keys the user's keys, for the timeout's message
     * @param wireKeys the keys as sent
     * @param request the query to send once the keys exist
     * @param reply the reply type of its opcode
     * @param <T> the type of the reply
     * @return the reply
     * @throws StoreTimeoutException if the keys did not all come within the store timeout
     * @throws StoreException if the connection failed
     */
    <T> T waitThenCall(
            List<String> keys, List<String> wireKeys, StoreRequest request, ReplyType<T> reply) {
        lockConnection();
        try {
            waitLocked(keys, wireKeys, timeout);
            return callLocked(request, reply, timeout);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Blocks until keys exist.
     *
     * @param keys the user's keys, for the timeout's message
     * @param wireKeys the keys as sent
     * @param limit how long to wait
     * @throws StoreTimeoutException if they did not all come in time
     * @throws StoreException if the connection failed
     */
    void waitFor(List<String> keys, List<String> wireKeys, Duration limit) {
        lockConnection();
        try {
            waitLocked(keys, wireKeys, limit);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Pops a queue's oldest value, waiting for one for at most the store timeout.
     *
     * @param key the user's key, for the timeout's message
     * @param wireKey the queue's key as sent
     * @return the value
     * @throws StoreTimeoutException if no value came in time
     * @throws StoreException if the connection failed
     */
    byte[] queuePop(String key, String wireKey) {
        Duration limit = timeout;
        long deadline = Stores.deadline(limit);
        StoreRequest pop = new StoreRequest(StoreOpcode.QUEUE_POP, List.of(wireKey), List.of());
        lockConnection();
        try {
            while (true) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new StoreTimeoutException(store, List.of(key), limit);
                }
                // a non-empty queue satisfies WAIT; another client may still pop first, so loop
                waitLocked(List.of(key), List.of(wireKey), Duration.ofNanos(left));
                byte[][] popped = callLocked(pop, ReplyType.QUEUE_POP, timeout);
                if (popped.length == 1) {
                    return popped[0];
                }
                // another client won the item, or a plain key of that name satisfied the WAIT
                sleep(10);
            }
        } catch (StoreTimeoutException e) {
            throw new StoreTimeoutException(store, List.of(key), limit);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sleeps, as the store's polling loops do.
     *
     * @param millis how long
     * @throws StoreException if interrupted, with the interrupt flag set again
     */
    void sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException(store + ": interrupted", e);
        }
    }

    /**
     * Closes the connection; idempotent. A call blocked on another thread fails at once with a
     * {@link StoreException}; later calls throw {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            connection.close();
        }
    }

    // WAIT, and on timeout CANCEL_WAIT, as PyTorch 2.1+ does, so the connection stays in step.
    private void waitLocked(List<String> keys, List<String> wireKeys, Duration limit) {
        ensureOpen();
        PendingCall wait =
                connection.send(
                        new StoreRequest(StoreOpcode.WAIT, wireKeys, List.of()),
                        ReplyType.WAIT.shape(),
                        0);
        Object result = StoreConnection.awaitOrNull(wait.future, limit);
        if (result == WaitResult.STOPPED) {
            return;
        }
        if (!StoreConnection.timedOut(result)) {
            // WAIT_CANCELED before any CANCEL_WAIT: the keys did not come, so do not succeed
            connection.close();
            throw new StoreException(
                    store
                            + ": the server cancelled the WAIT for "
                            + keys
                            + " that this client did not cancel; connection closed");
        }
        PendingCall cancel =
                connection.send(
                        new StoreRequest(StoreOpcode.CANCEL_WAIT, List.of(), List.of()),
                        ReplyType.CANCEL.shape(),
                        0);
        connection.await(cancel, Duration.ofSeconds(Math.max(10, Math.min(limit.toSeconds(), 60))));
        if (wait.future.isDone() && wait.future.join() == WaitResult.STOPPED) {
            return; // the keys landed while we cancelled: nothing was lost, so succeed
        }
        throw new StoreTimeoutException(store, keys, limit);
    }

    private <T> T callLocked(StoreRequest request, ReplyType<T> reply, Duration limit) {
        ensureOpen();
        return connection.call(request, reply, limit);
    }

    // Calls share one connection, as in PyTorch: a call waits for the one in progress, but
    // never longer than the store timeout.
    private void lockConnection() {
        Duration limit = timeout;
        try {
            if (lock.tryLock(StoreConnection.nanos(limit), TimeUnit.NANOSECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new StoreException(store + ": interrupted while waiting for the connection", e);
        }
        throw new StoreException(
                store
                        + ": another thread's call held this instance's connection for over "
                        + limit.toMillis()
                        + " ms (calls of one TcpStore are serialised, as in PyTorch: use one"
                        + " instance per thread for concurrent blocking calls)");
    }

    private void ensureOpen() {
        if (closed.get()) {
            throw new IllegalStateException(store + " is closed");
        }
    }
}
