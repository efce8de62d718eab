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
package ai.djl.distributed.backend;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.store.Store;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Why a rank aborted its group, told through the group's store, so that a peer that only sees the
 * connection drop can still name that rank and its reason. A transport tells its peers in band
 * where it can (an abort frame, a board page), but not always: a frame half written when the abort
 * comes cannot be followed by another, and a peer blocked in a send sees a reset, not a reason.
 *
 * <p>The aborting rank sets {@code abort/<rank>} in the group's store to its reason <em>before</em>
 * it closes its connections; a peer that then loses the connection reads that key. The store orders
 * the two: a peer that sees the connection drop finds the key, unless the aborting rank could not
 * reach the store in time. A rank that died without a word leaves no key.
 *
 * <p>Every call is bounded ({@link #PUBLISH_WAIT}, {@link #LOOKUP_WAIT}): the store call runs on a
 * daemon thread, and one that has not returned by then is abandoned (a store that hangs is bounded
 * by its own timeout). A TcpStore serialises the calls of one instance on its connection, so a
 * notice waits behind another thread's blocking call on the same store (a monitored barrier, a
 * user's {@code waitFor}); past the bound the peers get the bare loss instead of the reason.
 * Thread-safe; it holds no thread of its own.
 */
public final class AbortNotices {

    /** How long {@link #publish} waits for the store before telling the peers anyway. */
    public static final Duration PUBLISH_WAIT = Duration.ofSeconds(1);

    /** How long {@link #explain} waits for the store before giving the bare loss. */
    public static final Duration LOOKUP_WAIT = Duration.ofMillis(500);

    private static final Logger logger = LoggerFactory.getLogger(AbortNotices.class);
    private static final String PREFIX = "abort/";
    private static final Executor STORE_CALLS =
            task -> {
                Thread t = new Thread(task, "djl-dist-abort-notice");
                t.setDaemon(true);
                t.start();
            };

    private final Store store;
    private final int rank;
    private final AtomicBoolean published = new AtomicBoolean();

    private AbortNotices(Store store, int rank) {
        this.store = store;
        this.rank = rank;
    }

    /**
     * Opens the notices of one rank of one group, before its connections: deletes what an earlier
     * group of the same name on the same store left under this rank's key (bounded by {@link
     * #PUBLISH_WAIT}), so that a crash of this group is never explained by that group's abort.
     *
     * @param store the group's store, namespaced for the group (and backend)
     * @param rank this rank in the group
     * @return the notices
     */
    public static AbortNotices open(Store store, int rank) {
        AbortNotices notices = new AbortNotices(store, rank);
        notices.bounded(() -> store.deleteKey(PREFIX + rank), PUBLISH_WAIT, "clearing the key");
        return notices;
    }

    /**
     * Returns whether a failure is, or wraps, a loss already explained by a peer's notice.
     *
     * @param e the failure
     * @return whether {@link #explain} made it, or one of its causes
     */
    public static boolean isExplained(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof Explained) {
                return true;
            }
        }
        return false;
    }

    /**
     * Sets this rank's reason in the store, once (later calls do nothing); returns when it is set,
     * or after {@link #PUBLISH_WAIT}. Call it before telling the peers by closing connections.
     *
     * @param cause why this rank aborts
     */
    public void publish(CommunicationException cause) {
        if (!published.compareAndSet(false, true)) {
            return;
        }
        byte[] reason = String.valueOf(cause.getMessage()).getBytes(StandardCharsets.UTF_8);
        String key = PREFIX + rank;
        bounded(
                // A set is not answered on the wire: the check that follows on the same
                // connection is, so the key is on the server once it returns.
                () -> {
                    store.set(key, reason);
                    return store.check(List.of(key));
                },
                PUBLISH_WAIT,
                "publishing the abort of rank " + rank);
    }

    /**
     * Returns the reason a peer published, if it did, for a failure that lost it without one.
     *
     * @param peer the peer's rank in the group
     * @return its reason, if it published one within {@link #LOOKUP_WAIT}
     */
    public Optional<String> reasonOf(int peer) {
        String key = PREFIX + peer;
        byte[] value =
                bounded(
                        () -> store.check(List.of(key)) ? store.get(key) : null,
                        LOOKUP_WAIT,
                        "reading the abort of rank " + peer);
        return Optional.ofNullable(value).map(v -> new String(v, StandardCharsets.UTF_8));
    }

    /**
     * Explains the loss of a peer by the reason it published: {@code "rank P aborted its process
     * group: REASON"}, keeping the loss as the cause; the loss itself where the peer published none
     * (it died, or could not reach the store).
     *
     * @param loss a failure that names the peer whose connection was lost
     * @return the explained failure, or {@code loss}
     */
    public CommunicationException explain(CommunicationException loss) {
        int peer = loss.getPeerRank();
        if (peer < 0 || peer == rank) {
            return loss;
        }
        return reasonOf(peer)
                .<CommunicationException>map(
                        reason ->
                                new Explained(
                                        "rank " + peer + " aborted its process group: " + reason,
                                        peer,
                                        loss))
                .orElse(loss);
    }

    /** A loss explained by the peer's notice. */
    private static final class Explained extends CommunicationException {

        private static final long serialVersionUID = 1L;

        Explained(String message, int peer, Throwable loss) {
            super(message, peer, loss);
        }
    }

    private <T> T bounded(StoreCall<T> call, Duration wait, String what) {
        CompletableFuture<T> f = new CompletableFuture<>();
        STORE_CALLS.execute(
                () -> {
                    try {
                        f.complete(call.run());
                    } catch (RuntimeException e) {
                        f.completeExceptionally(e);
                    }
                });
        long end = System.nanoTime() + wait.toNanos();
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return f.get(Math.max(0, end - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true; // the caller may be aborting because of an interrupt
                }
            }
        } catch (ExecutionException | TimeoutException e) {
            logger.debug("{} through the store failed", what, e);
            return null;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A store call that may block. */
    private interface StoreCall<T> {
        T run();
    }
}
