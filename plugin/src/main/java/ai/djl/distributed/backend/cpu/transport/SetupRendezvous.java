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
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The store keys through which the ranks of one set-up step (shared memory, the host-key exchange,
 * ...) meet, and how a rank whose step fails tells the others, so that they fail at once with its
 * reason instead of waiting for it until their timeout. For a step named {@code <p>}:
 *
 * <ul>
 *   <li>{@code <p>/<rank>}: what the rank announces, or {@code failed <reason>} if it gave up
 *       before it could say;
 *   <li>{@code <p>/done}: how many ranks are done (only for steps that end with {@link
 *       #awaitAllDone});
 *   <li>{@code <p>/verdict}: {@code ok} once every rank is done (set by the rank that counts last),
 *       or {@code failed <rank> <reason>} for the first rank that gave up. It is set by
 *       compare-and-set, so the first outcome stands and every rank reads the same one;
 *   <li>{@code <p>/decided}: set (plainly) by every rank that compare-and-sets the verdict, after
 *       it; the key the ranks wait on. PyTorch's classic TCPStore server (torchrun's agent store in
 *       builds without libuv) wakes no waiter on a compare-and-set, only on a set, add or append,
 *       so a wait on the verdict itself would last until the timeout there.
 * </ul>
 *
 * A rank that gives up before announcing announces its failure instead, so a peer waiting for its
 * announcement finds it; one that gives up later sets the verdict, which a peer waiting for every
 * rank to be done finds. Every wait is bounded by the step's deadline.
 *
 * <p>Thread-safe and immutable. Keys are assumed fresh: the store is namespaced for one group.
 */
public final class SetupRendezvous {

    private static final Logger logger = LoggerFactory.getLogger(SetupRendezvous.class);

    private static final String FAILED = "failed ";
    private static final String OK = "ok";
    private static final byte[] ABSENT = new byte[0];

    /** The host-key exchange: {@code host/<rank>} (no {@link #awaitAllDone}). */
    public static final SetupRendezvous HOSTS =
            new SetupRendezvous("host", "the host-key exchange", "done");

    /** The TCP mesh: {@code tcp/<rank>} (addresses), {@code tcp/connected}, {@code tcp/verdict}. */
    public static final SetupRendezvous TCP =
            new SetupRendezvous("tcp", "its TCP mesh", "connected");

    /** Shared memory: {@code shm/<rank>}, {@code shm/mapped}, {@code shm/verdict}. */
    public static final SetupRendezvous SHM = new SetupRendezvous("shm", "shared memory", "mapped");

    /** The peer-memory probe: {@code cma/<rank>}, {@code cma/probed}, {@code cma/verdict}. */
    public static final SetupRendezvous CMA =
            new SetupRendezvous("cma", "its peer-memory probe", "probed");

    /** Every step of the CPU backend's set-up, in the order it makes them. */
    public static final List<SetupRendezvous> CPU_STEPS = List.of(HOSTS, TCP, SHM, CMA);

    private final String prefix;
    private final String what;
    private final String doneKey;

    /**
     * Makes the rendezvous of one set-up step.
     *
     * @param prefix the step's key prefix, e.g. {@code shm}
     * @param what what the step sets up, for messages, e.g. {@code shared memory}
     * @param doneKey the name of the key counting the ranks done, under the prefix
     */
    public SetupRendezvous(String prefix, String what, String doneKey) {
        this.prefix = prefix;
        this.what = what;
        this.doneKey = prefix + "/" + doneKey;
    }

    /**
     * Returns the key under which a rank announces itself.
     *
     * @param rank the rank
     * @return the key
     */
    public String announcementKey(int rank) {
        return prefix + "/" + rank;
    }

    /**
     * Announces what this rank has to say. Does not block beyond the store's call.
     *
     * @param store the group's store
     * @param rank this rank
     * @param announcement what it says; must not start with {@code failed }
     */
    public void announce(Store store, int rank, String announcement) {
        store.set(announcementKey(rank), announcement.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * Blocks until {@code peer} has announced itself, for at most the deadline.
     *
     * @param store the group's store
     * @param peer the rank waited for
     * @param deadline when to give up
     * @return the announcement
     * @throws PeerFailed if the peer announced that it gave up instead, with its reason
     * @throws CommunicationException if it announced nothing in time
     */
    public String awaitAnnouncement(Store store, int peer, Deadline deadline) {
        String key = announcementKey(peer);
        try {
            store.waitFor(List.of(key), remaining(deadline));
        } catch (StoreTimeoutException e) {
            throw new CommunicationException(
                    "rank " + peer + " did not set up " + what + " within " + deadline.timeout(),
                    peer,
                    e);
        }
        String published = new String(store.get(key), StandardCharsets.UTF_8);
        if (published.startsWith(FAILED)) {
            throw new PeerFailed(peer, what, published.substring(FAILED.length()));
        }
        return published;
    }

    /**
     * Counts this rank as done, then blocks until every rank is, or one has given up, for at most
     * the deadline.
     *
     * @param store the group's store
     * @param size the number of ranks
     * @param deadline when to give up
     * @throws PeerFailed if a rank gave up, with its reason
     * @throws CommunicationException if not every rank counted itself in time
     */
    public void awaitAllDone(Store store, int size, Deadline deadline) {
        String verdictKey = prefix + "/verdict";
        if (store.add(doneKey, 1) == size) {
            decide(store, OK.getBytes(StandardCharsets.UTF_8));
        }
        try {
            store.waitFor(List.of(prefix + "/decided"), remaining(deadline));
        } catch (StoreTimeoutException e) {
            checkVerdict(store);
            throw new CommunicationException(
                    "not every rank set up "
                            + what
                            + " within "
                            + deadline.timeout()
                            + " ("
                            + store.add(doneKey, 0)
                            + " of "
                            + size
                            + " did)",
                    -1,
                    e);
        }
        throwIfFailed(verdictKey, new String(store.get(verdictKey), StandardCharsets.UTF_8));
    }

    /**
     * Sets the verdict unless one is set, then the key its waiters wait on; returns the verdict
     * that stands.
     */
    private byte[] decide(Store store, byte[] verdict) {
        byte[] standing = store.compareSet(prefix + "/verdict", ABSENT, verdict);
        store.set(prefix + "/decided", OK.getBytes(StandardCharsets.UTF_8));
        return standing;
    }

    /**
     * Throws if a rank has given up this step; for a wait that cannot wait on the store (e.g. one
     * on sockets) to call between bounded slices of it. Blocks only for one store call.
     *
     * @param store the group's store
     * @throws PeerFailed if a rank gave up, with its reason
     */
    public void checkVerdict(Store store) {
        String verdictKey = prefix + "/verdict";
        if (store.check(List.of(verdictKey))) {
            throwIfFailed(verdictKey, new String(store.get(verdictKey), StandardCharsets.UTF_8));
        }
    }

    private void throwIfFailed(String verdictKey, String verdict) {
        if (!verdict.equals(OK)) {
            Verdict failed = failedVerdict(verdict);
            if (failed == null) {
                throw new CommunicationException(
                        verdictKey
                                + " holds '"
                                + verdict
                                + "' (expected: ok, or failed, a rank and a reason)",
                        -1);
            }
            throw new PeerFailed(failed.rank, what, failed.reason);
        }
    }

    /**
     * Returns a rank's failure in a set-up step as a {@link CommunicationException}: {@code e}
     * itself where it is one, else one reading {@code rank <rank> <doing>: <e>}, {@code e} its
     * cause. The one form for every step, so that its peers read the same kind of reason.
     *
     * @param rank the failing rank
     * @param doing what it failed doing, e.g. {@code could not connect its TCP mesh}
     * @param e its failure
     * @return the failure to give up with
     */
    public static CommunicationException failure(int rank, String doing, Exception e) {
        return e instanceof CommunicationException ce
                ? ce
                : new CommunicationException("rank " + rank + " " + doing + ": " + e, -1, e);
    }

    /**
     * Tells the peers that this rank gives up, unless {@code failure} is a peer's that it only
     * passes on; returns what to throw: a peer's failure where a peer gave up first (this rank's
     * own failure is then likely a consequence), with this rank's as its cause, else {@code
     * failure}.
     *
     * <p>Blocks for at most {@link AbortNotices#PUBLISH_WAIT}, interrupts or not: the store may be
     * what failed, and a hung call is abandoned on its daemon thread.
     *
     * @param store the group's store
     * @param rank this rank
     * @param announced whether this rank announced itself (else it announces the failure)
     * @param failure this rank's failure
     * @return what to throw
     */
    public CommunicationException giveUp(
            Store store, int rank, boolean announced, CommunicationException failure) {
        return tell(store, rank, failure, List.of(this), announced, what);
    }

    /**
     * Tells the peers that this rank gives up every step of {@code steps} it has not finished: each
     * step's verdict is set unless one is already, and this rank's announcement in it reads {@code
     * failed <reason>} unless it announced there already (both by compare-and-set, so nothing
     * already said is overwritten). For a set-up made of several steps: a rank that fails between
     * two steps, or in one that has no {@link #awaitAllDone}, would otherwise leave its peers,
     * already gone on to the next step, waiting for its announcement until their timeout. Returns
     * what to throw as {@link #giveUp(Store, int, boolean, CommunicationException)}, after the
     * first step's verdict.
     *
     * @param store the group's store
     * @param rank this rank
     * @param failure this rank's failure
     * @param steps the steps, in the order the set-up makes them
     * @param what what the steps set up together, for messages, e.g. {@code the CPU backend}
     * @return what to throw
     */
    public static CommunicationException giveUp(
            Store store,
            int rank,
            CommunicationException failure,
            List<SetupRendezvous> steps,
            String what) {
        return tell(store, rank, failure, steps, false, what);
    }

    private static CommunicationException tell(
            Store store,
            int rank,
            CommunicationException failure,
            List<SetupRendezvous> steps,
            boolean announced,
            String what) {
        if (failure instanceof PeerFailed) {
            return failure; // the peer told everyone
        }
        SetupRendezvous first = steps.get(0);
        String reason = String.valueOf(failure.getMessage());
        byte[] mine = (FAILED + rank + " " + reason).getBytes(StandardCharsets.UTF_8);
        byte[] unannounced = (FAILED + reason).getBytes(StandardCharsets.UTF_8);
        CompletableFuture<String> told = new CompletableFuture<>();
        Thread t =
                new Thread(
                        () -> {
                            try {
                                String verdict = null;
                                for (SetupRendezvous step : steps) {
                                    byte[] v = step.decide(store, mine);
                                    if (verdict == null) {
                                        verdict = new String(v, StandardCharsets.UTF_8);
                                    }
                                    String key = step.announcementKey(rank);
                                    // Not over an announcement made; set again after, since a
                                    // compare-and-set wakes no waiter on PyTorch's classic server.
                                    if (!announced
                                            && Arrays.equals(
                                                    store.compareSet(key, ABSENT, unannounced),
                                                    unannounced)) {
                                        store.set(key, unannounced);
                                    }
                                }
                                // A set is not answered on a TcpStore's wire; a check after it
                                // on the same connection is, so the keys are then there.
                                store.check(List.of(first.prefix + "/decided"));
                                told.complete(verdict);
                            } catch (RuntimeException e) {
                                told.completeExceptionally(e);
                            }
                        },
                        "djl-dist-" + first.prefix + "-give-up-r" + rank);
        t.setDaemon(true);
        t.start();
        long deadline = System.nanoTime() + AbortNotices.PUBLISH_WAIT.toNanos();
        if (!Waits.awaitUninterruptibly(told, deadline) || told.isCompletedExceptionally()) {
            logger.debug("rank {} could not tell its peers it gave up {}", rank, what);
            return failure;
        }
        Verdict won = failedVerdict(told.join());
        if (won == null || won.rank == rank) {
            return failure;
        }
        return new PeerFailed(won.rank, what, won.reason, failure);
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

    /** A peer gave up a set-up step: it names the peer and gives the peer's reason. */
    public static final class PeerFailed extends CommunicationException {

        private static final long serialVersionUID = 1L;

        PeerFailed(int peer, String what, String reason) {
            super(message(peer, what, reason), peer);
        }

        PeerFailed(int peer, String what, String reason, Throwable consequence) {
            super(message(peer, what, reason), peer, consequence);
        }

        private static String message(int peer, String what, String reason) {
            return "rank " + peer + " gave up setting up " + what + ": " + reason;
        }
    }
}
