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
import ai.djl.distributed.backend.AbortNotices;
import ai.djl.distributed.backend.Waits;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreTimeoutException;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The store keys through which the ranks of a {@link ShmTransport} meet, and how a rank whose
 * set-up fails tells the others, so that they fail at once with its reason instead of waiting for
 * it until their timeout:
 *
 * <ul>
 *   <li>{@code shm/<rank>}: where the rank's segments are, or {@code failed <reason>} if it gave up
 *       before it could say;
 *   <li>{@code shm/mapped}: how many ranks have mapped everything;
 *   <li>{@code shm/verdict}: {@code ok} once every rank has mapped everything (set by the rank that
 *       counts last), or {@code failed <rank> <reason>} for the first rank that gave up. It is set
 *       by compare-and-set, so the first outcome stands and every rank reads the same one.
 * </ul>
 *
 * Every rank announces before it waits for anyone, so a rank's waits can only be held up by a rank
 * that has not announced (it then finds {@code failed} in its key) or by one that has not counted
 * itself mapped (it then finds the verdict). Every wait is bounded by the set-up's deadline.
 *
 * <p>Thread-safe; the class holds nothing. Keys are assumed fresh: the store is namespaced for one
 * group (as the announcements and the counter already require).
 */
final class ShmRendezvous {

    private static final Logger logger = LoggerFactory.getLogger(ShmRendezvous.class);

    private static final String FAILED = "failed ";
    private static final String OK = "ok";
    private static final String MAPPED = "shm/mapped";
    private static final String VERDICT = "shm/verdict";
    private static final byte[] ABSENT = new byte[0];

    private ShmRendezvous() {}

    /** The key under which a rank announces its segments. */
    static String announcementKey(int rank) {
        return "shm/" + rank;
    }

    /**
     * Blocks until {@code peer} has announced its segments, for at most the deadline.
     *
     * @return the announcement
     * @throws PeerFailed if the peer announced that it gave up instead, with its reason
     * @throws CommunicationException if it announced nothing in time
     */
    static String awaitAnnouncement(Store store, int peer, Deadline deadline) {
        String key = announcementKey(peer);
        try {
            store.waitFor(List.of(key), remaining(deadline));
        } catch (StoreTimeoutException e) {
            throw new CommunicationException(
                    "rank " + peer + " did not set up shared memory within " + deadline.timeout(),
                    peer,
                    e);
        }
        String published = new String(store.get(key), StandardCharsets.UTF_8);
        if (published.startsWith(FAILED)) {
            throw new PeerFailed(peer, published.substring(FAILED.length()));
        }
        return published;
    }

    /**
     * Counts this rank as having mapped everything, then blocks until every rank has, or one has
     * given up, for at most the deadline. Once it returns no rank opens this rank's segments any
     * more, so their descriptors may be closed.
     *
     * @throws PeerFailed if a rank gave up, with its reason
     * @throws CommunicationException if not every rank counted itself in time
     */
    static void awaitAllMapped(Store store, int size, Deadline deadline) {
        if (store.add(MAPPED, 1) == size) {
            store.compareSet(VERDICT, ABSENT, OK.getBytes(StandardCharsets.UTF_8));
        }
        try {
            store.waitFor(List.of(VERDICT), remaining(deadline));
        } catch (StoreTimeoutException e) {
            throw new CommunicationException(
                    "not every rank mapped its shared memory within "
                            + deadline.timeout()
                            + " ("
                            + store.add(MAPPED, 0)
                            + " of "
                            + size
                            + " did)",
                    -1,
                    e);
        }
        String verdict = new String(store.get(VERDICT), StandardCharsets.UTF_8);
        if (!verdict.equals(OK)) {
            Verdict failed = failedVerdict(verdict);
            if (failed == null) {
                throw new CommunicationException(
                        VERDICT
                                + " holds '"
                                + verdict
                                + "' (expected: ok, or failed, a rank and a reason)",
                        -1);
            }
            throw new PeerFailed(failed.rank, failed.reason);
        }
    }

    /**
     * Tells the peers that this rank gives up, unless {@code failure} is a peer's that it only
     * passes on; returns what to throw: a peer's failure where a peer gave up first (this rank's
     * own failure is then likely a consequence, e.g. the peer's segments vanishing), else {@code
     * failure}. Call it before closing this rank's descriptors, so that a peer that finds them gone
     * finds the reason too.
     *
     * <p>Blocks for at most {@link AbortNotices#PUBLISH_WAIT}, interrupts or not: the store may be
     * what failed, and a hung call is abandoned on its daemon thread.
     *
     * @param announced whether this rank announced its segments (else it announces the failure)
     */
    static CommunicationException giveUp(
            Store store, int rank, boolean announced, CommunicationException failure) {
        if (failure instanceof PeerFailed) {
            return failure; // the peer told everyone
        }
        String reason = String.valueOf(failure.getMessage());
        CompletableFuture<String> told = new CompletableFuture<>();
        Thread t =
                new Thread(
                        () -> {
                            try {
                                byte[] mine =
                                        (FAILED + rank + " " + reason)
                                                .getBytes(StandardCharsets.UTF_8);
                                byte[] first = store.compareSet(VERDICT, ABSENT, mine);
                                if (!announced) {
                                    String key = announcementKey(rank);
                                    store.set(
                                            key,
                                            (FAILED + reason).getBytes(StandardCharsets.UTF_8));
                                    // A set is not answered on a TcpStore's wire; a check after
                                    // it on the same connection is, so the key is then there.
                                    store.check(List.of(key));
                                }
                                told.complete(new String(first, StandardCharsets.UTF_8));
                            } catch (RuntimeException e) {
                                told.completeExceptionally(e);
                            }
                        },
                        "djl-dist-shm-give-up-r" + rank);
        t.setDaemon(true);
        t.start();
        long deadline = System.nanoTime() + AbortNotices.PUBLISH_WAIT.toNanos();
        if (!Waits.awaitUninterruptibly(told, deadline) || told.isCompletedExceptionally()) {
            logger.debug("rank {} could not tell its peers it gave up its shared memory", rank);
            return failure;
        }
        Verdict first = failedVerdict(told.join());
        if (first == null || first.rank == rank) {
            return failure;
        }
        return new PeerFailed(first.rank, first.reason, failure);
    }

    private static Verdict failedVerdict(String verdict) {
        if (!verdict.startsWith(FAILED)) {
            return null;
        }
        String rest = verdict.substring(FAILED.length());
        int space = rest.indexOf(' ');
        try {
            return new Verdict(
                    Integer.parseInt(rest.substring(0, space)), rest.substring(space + 1));
        } catch (NumberFormatException | IndexOutOfBoundsException e) {
            return null;
        }
    }

    private static Duration remaining(Deadline deadline) {
        return Duration.ofNanos(Math.max(1_000_000, deadline.remainingNanos()));
    }

    /** A rank that gave up, and why. */
    private record Verdict(int rank, String reason) {}

    /** A peer gave up its set-up: it names the peer and gives the peer's reason. */
    static final class PeerFailed extends CommunicationException {

        private static final long serialVersionUID = 1L;

        PeerFailed(int peer, String reason) {
            super(message(peer, reason), peer);
        }

        PeerFailed(int peer, String reason, Throwable consequence) {
            super(message(peer, reason), peer, consequence);
        }

        private static String message(int peer, String reason) {
            return "rank " + peer + " gave up setting up shared memory: " + reason;
        }
    }
}
