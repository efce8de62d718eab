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
package ai.djl.distributed.backend.cpu;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.backend.AbortNotices;
import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.BackendProvider;
import ai.djl.distributed.backend.cpu.transport.Deadline;
import ai.djl.distributed.backend.cpu.transport.HybridTransport;
import ai.djl.distributed.backend.cpu.transport.PeerMemory;
import ai.djl.distributed.backend.cpu.transport.SetupRendezvous;
import ai.djl.distributed.backend.cpu.transport.ShmTransport;
import ai.djl.distributed.backend.cpu.transport.SocketInterfaces;
import ai.djl.distributed.backend.cpu.transport.TcpTransport;
import ai.djl.distributed.backend.cpu.transport.Transport;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.distributed.store.Store;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * Provides the {@link CpuBackend} under the names "cpu" and "gloo" (so that code written for
 * PyTorch's CPU backend keeps its name), and picks its transport from {@value #TRANSPORT}:
 *
 * <ul>
 *   <li>{@code auto} (the default): when every rank of the group runs on this host (same boot, same
 *       pid and mount namespaces) and can make anonymous shared memory ({@code memfd_create}),
 *       both: TCP for small and point-to-point messages, shared memory for large collective ones
 *       ({@link ai.djl.distributed.backend.cpu.transport.HybridTransport}), and, where the ranks
 *       may read each other's memory ({@link PeerMemory}), single-copy large all-reduces; else TCP;
 *   <li>{@code shm}: shared memory, an error if the ranks are not all on one host;
 *   <li>{@code tcp}: TCP, on the address {@link SocketInterfaces} picks.
 * </ul>
 *
 * Every rank decides alike: they compare host keys through the store. The backend option {@code
 * transport} (e.g. {@code ProcessGroups.builder().optBackendOption("cpu", "transport", "shm")})
 * picks it for one group; {@value #TRANSPORT}, from the environment or a system property, is the
 * default.
 */
public final class CpuBackendProvider implements BackendProvider {

    /** The variable (or system property) that picks the transport unless the option does. */
    public static final String TRANSPORT = "DJL_DIST_TRANSPORT";

    /** The options this backend takes: {@code transport} (auto, tcp or shm). */
    public static final Set<String> OPTIONS = Set.of("transport");

    /**
     * The host-key exchange, {@code host/<rank>}: a rank that fails before it has announced its key
     * announces its failure instead, so that its peers fail at once naming it.
     */
    private static final SetupRendezvous HOSTS = SetupRendezvous.HOSTS;

    /** {@inheritDoc} */
    @Override
    public List<String> getNames() {
        return List.of(CpuBackend.NAME, "gloo");
    }

    /** {@inheritDoc} */
    @Override
    public Backend create(BackendContext context) {
        Store store = context.store();
        int rank = context.rank();
        int size = context.size();
        Duration timeout = context.timeout();
        DistributedEnv env = DistributedEnv.fromProcess();
        String mode;
        boolean local = false;
        try {
            String option = context.option(CpuBackend.NAME, OPTIONS, "transport");
            mode =
                    (option != null ? option : env.get(TRANSPORT).orElse("auto"))
                            .toLowerCase(Locale.ROOT);
            if (!List.of("auto", "tcp", "shm").contains(mode)) {
                throw new IllegalArgumentException(
                        (option != null ? "backend option cpu.transport" : TRANSPORT)
                                + ": '"
                                + mode
                                + "' (expected: auto, tcp or shm)");
            }
            if (!mode.equals("tcp") && size > 1) {
                // A rank without shared memory publishes no key, so that no rank picks it alone.
                HOSTS.announce(store, rank, ShmTransport.isAvailable() ? hostKey() : "");
                local = allOnThisHost(store, rank, size, Deadline.after(timeout));
            }
        } catch (RuntimeException e) {
            throw tellPeers(store, rank, size, e);
        }
        if (mode.equals("shm") && !local && size > 1) {
            // Every rank finds it alike: each compares every rank's key with its own. A rank alone
            // announces no key, and needs none: it is on one host with itself.
            throw new IllegalArgumentException(
                    "transport: 'shm' (expected: every rank on one host; they are not)");
        }
        Transport transport;
        String kind = mode.equals("shm") ? "shm" : local ? "auto (tcp and shm)" : "tcp";
        try {
            // One set of abort notices for the group: a hybrid's two transports tell the store
            // once.
            AbortNotices notices = AbortNotices.open(store, rank);
            if (mode.equals("shm")) {
                transport = ShmTransport.connect(store, rank, size, timeout, notices);
            } else {
                transport =
                        TcpTransport.connect(
                                store,
                                rank,
                                size,
                                SocketInterfaces.localAddress(env),
                                timeout,
                                notices);
                if (local) {
                    // auto on one host: small messages keep TCP's prompt wake-ups, large ones get
                    // shared memory's bandwidth.
                    ShmTransport shm = null;
                    try {
                        shm = ShmTransport.connect(store, rank, size, timeout, notices);
                        transport =
                                new HybridTransport(
                                        transport,
                                        shm,
                                        PeerMemory.connect(store, rank, size, timeout));
                    } catch (RuntimeException e) {
                        transport.close();
                        if (shm != null) {
                            shm.close();
                        }
                        throw e;
                    }
                }
            }
        } catch (RuntimeException e) {
            // Its peers may have gone on to a step this rank never reaches.
            throw tellPeers(store, rank, size, e);
        }
        return new CpuBackend(transport, timeout, kind);
    }

    /**
     * Tells the peers that this rank gives up every set-up step it has not finished: a peer waiting
     * for it in any of them then fails at once, naming it and giving its reason, whether it is
     * still in the step this rank failed in or has gone on to a later one. Returns what to throw:
     * this rank's own error where it is its own, else the peer's that came first.
     */
    private static RuntimeException tellPeers(Store store, int rank, int size, RuntimeException e) {
        if (size == 1) {
            return e; // no peer waits for this rank
        }
        CommunicationException failure =
                SetupRendezvous.failure(rank, "failed setting up the CPU backend", e);
        CommunicationException thrown =
                SetupRendezvous.giveUp(
                        store, rank, failure, SetupRendezvous.CPU_STEPS, "the CPU backend");
        return thrown == failure && !(e instanceof CommunicationException) ? e : thrown;
    }

    /**
     * Blocks until every rank has announced its host key, or one has given up, for at most the
     * deadline; returns whether every key equals this rank's (which announced its own).
     */
    private static boolean allOnThisHost(Store store, int rank, int size, Deadline deadline) {
        String mine = new String(store.get(HOSTS.announcementKey(rank)), StandardCharsets.UTF_8);
        boolean same = !mine.isEmpty();
        for (int r = 0; r < size; r++) {
            if (r != rank) {
                same &= mine.equals(HOSTS.awaitAnnouncement(store, r, deadline));
            }
        }
        return same;
    }

    /** The boot id with the pid and mount namespaces: equal only where shared memory is. */
    static String hostKey() {
        try {
            String boot = Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).trim();
            return boot
                    + "/"
                    + Files.readSymbolicLink(Path.of("/proc/self/ns/pid"))
                    + "/"
                    + Files.readSymbolicLink(Path.of("/proc/self/ns/mnt"));
        } catch (IOException | UnsupportedOperationException e) {
            return ""; // no /proc: not Linux, no shared memory transport
        }
    }
}
