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
package ai.djl.distributed.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import ai.djl.distributed.CommunicationException;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * One rank's set-up (a transport's connect, a backend's creation, a probe) on its own daemon
 * thread, for the tests where a failing rank must fail its peers at once: it records when the
 * set-up ended and how, and closes what the set-up returns should it succeed. Thread-safe: the
 * set-up thread records the outcome, and any thread may query it.
 */
public final class SetupRank {

    /** How soon a peer must fail to have failed "at once", well below the groups' timeouts. */
    public static final long PROMPT_MS = 5_000;

    private final int rank;
    private final String succeeded;
    private final Duration timeout;
    private final Thread thread;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    private final long start = System.nanoTime();
    private volatile long end;

    private SetupRank(
            String name, int rank, Duration timeout, String succeeded, Callable<?> setup) {
        this.rank = rank;
        this.succeeded = succeeded;
        this.timeout = timeout;
        this.thread =
                new Thread(
                        () -> {
                            try {
                                Object result = setup.call();
                                end = System.nanoTime();
                                if (result instanceof AutoCloseable c) {
                                    c.close();
                                }
                                done.complete(null);
                            } catch (Throwable e) {
                                end = System.nanoTime();
                                done.completeExceptionally(e);
                            }
                        },
                        name + "-rank-" + rank);
        thread.setDaemon(true);
    }

    /**
     * Starts one rank's set-up on a thread of its own.
     *
     * @param name the set-up's name, which names the thread ({@code name-rank-N})
     * @param rank the rank
     * @param timeout the group's timeout; the outcome is awaited for twice as long
     * @param succeeded what the rank did should it succeed ("connected", "probed"), for the message
     * @param setup the set-up; what it returns is closed if {@link AutoCloseable}
     * @return the started rank
     */
    public static SetupRank start(
            String name, int rank, Duration timeout, String succeeded, Callable<?> setup) {
        SetupRank r = new SetupRank(name, rank, timeout, succeeded, setup);
        r.thread.start();
        return r;
    }

    /**
     * Returns the rank.
     *
     * @return the rank
     */
    public int rank() {
        return rank;
    }

    /**
     * Returns whether the rank is blocked in a timed wait (the store's, once it has announced).
     *
     * @return whether the set-up thread is in {@link Thread.State#TIMED_WAITING}
     */
    public boolean isWaiting() {
        return thread.getState() == Thread.State.TIMED_WAITING;
    }

    /** Interrupts the rank's set-up thread, to make it fail for real. */
    public void interrupt() {
        thread.interrupt();
    }

    /**
     * Returns the rank's failure, which must be a {@link CommunicationException}.
     *
     * @return the failure
     * @throws Exception if the outcome is not there within twice the timeout
     */
    public CommunicationException failure() throws Exception {
        RuntimeException e = anyFailure();
        if (e instanceof CommunicationException ce) {
            return ce;
        }
        throw new AssertionError("rank " + rank + " failed otherwise", e);
    }

    /**
     * Returns the rank's failure, of whatever kind of {@link RuntimeException}.
     *
     * @return the failure
     * @throws Exception if the outcome is not there within twice the timeout
     */
    public RuntimeException anyFailure() throws Exception {
        try {
            done.get(timeout.toSeconds() * 2, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof RuntimeException re) {
                return re;
            }
            throw new AssertionError("rank " + rank + " failed otherwise", e.getCause());
        }
        return fail("rank " + rank + " " + succeeded);
    }

    /**
     * Returns how long the set-up ran, once it has ended.
     *
     * @return the milliseconds from the start to the set-up's end
     */
    public long elapsedMs() {
        return (end - start) / 1_000_000;
    }

    /**
     * Asserts that {@code peer} failed within {@link #PROMPT_MS} with a {@link
     * CommunicationException} naming {@code culprit} and giving its reason.
     *
     * @param peer the peer
     * @param culprit the rank that failed first
     * @param cause the culprit's failure
     * @throws Exception if the peer's outcome is not there within twice the timeout
     */
    public static void assertFailedPromptlyBecauseOf(
            SetupRank peer, int culprit, RuntimeException cause) throws Exception {
        RuntimeException any = peer.anyFailure();
        long ms = peer.elapsedMs();
        assertTrue(
                ms < PROMPT_MS,
                "rank " + peer.rank + " failed after " + ms + " ms, not at once: " + any);
        if (!(any instanceof CommunicationException e)) {
            throw new AssertionError("rank " + peer.rank + " failed otherwise", any);
        }
        assertEquals(culprit, e.getPeerRank(), e.getMessage());
        assertTrue(e.getMessage().contains("rank " + culprit), e.getMessage());
        assertTrue(
                e.getMessage().contains(cause.getMessage()),
                "rank " + peer.rank + " does not give rank " + culprit + "'s reason: " + e);
    }
}
