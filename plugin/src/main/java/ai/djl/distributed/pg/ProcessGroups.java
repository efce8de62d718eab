package ai.djl.distributed.pg;

import ai.djl.distributed.backend.BackendProvider;
import ai.djl.distributed.rendezvous.Rendezvous;
import ai.djl.distributed.store.Store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.ServiceLoader;

/**
 * Creates world process groups, as {@code torch.distributed.init_process_group} does, without
 * global state: several worlds may live in one JVM (the in-process test harness runs one per
 * thread). {@link Distributed} keeps one world per process for code that wants the global style.
 */
public final class ProcessGroups {

    /** The default bound of every operation: 30 minutes, PyTorch's default for gloo. */
    public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(30);

    private ProcessGroups() {}

    /**
     * Creates the world group after a rendezvous through an init method. Blocks until every rank
     * has joined and connected, or the timeout passes.
     *
     * @param backend the backend's name: "cpu" (alias "gloo")
     * @param initMethod {@code env://}, {@code tcp://host:port} or {@code file:///path}
     * @param rank this rank, or -1 to read it from the URL or the environment
     * @param worldSize the number of ranks, or -1 to read it from the URL or the environment
     * @param timeout the bound of the rendezvous and of every later operation
     * @return the world group; closing it destroys every group and the store
     */
    public static ProcessGroup init(
            String backend, String initMethod, int rank, int worldSize, Duration timeout) {
        BackendProvider provider = provider(backend);
        Rendezvous.Result r = Rendezvous.create(initMethod, rank, worldSize, timeout);
        try {
            return new GroupContext(r.store(), true, provider, r.rank(), r.worldSize())
                    .createWorld(timeout);
        } catch (RuntimeException e) {
            r.close();
            throw e;
        }
    }

    /**
     * Creates the world group on a store every rank shares. Blocks until every rank has connected,
     * or the timeout passes.
     *
     * @param backend the backend's name: "cpu" (alias "gloo")
     * @param store the store; the caller keeps owning it and closes it after the group
     * @param rank this rank
     * @param worldSize the number of ranks
     * @param timeout the bound of every operation
     * @return the world group
     */
    public static ProcessGroup init(
            String backend, Store store, int rank, int worldSize, Duration timeout) {
        if (worldSize <= 0) {
            throw new IllegalArgumentException("worldSize: " + worldSize + " (expected: > 0)");
        }
        if (rank < 0 || rank >= worldSize) {
            throw new IllegalArgumentException(
                    "rank: " + rank + " (expected: in [0, " + worldSize + "))");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout: " + timeout + " (expected: > 0)");
        }
        return new GroupContext(store, false, provider(backend), rank, worldSize)
                .createWorld(timeout);
    }

    /**
     * Returns the names of the backends available.
     *
     * @return each provider's names
     */
    public static List<String> availableBackends() {
        List<String> names = new ArrayList<>();
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class)) {
            names.addAll(p.getNames());
        }
        return names;
    }

    static BackendProvider provider(String name) {
        if (name == null) {
            throw new IllegalArgumentException(
                    "backend: null (expected: one of " + availableBackends() + ")");
        }
        for (BackendProvider p : ServiceLoader.load(BackendProvider.class)) {
            if (p.getNames().contains(name.toLowerCase(java.util.Locale.ROOT))) {
                return p;
            }
        }
        throw new IllegalArgumentException(
                "backend: '" + name + "' (expected: one of " + availableBackends() + ")");
    }
}
