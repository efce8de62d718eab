package ai.djl.distributed.backend;

import ai.djl.distributed.store.Store;

import java.time.Duration;
import java.util.List;

/**
 * Creates backends of one kind; found through {@link java.util.ServiceLoader}, as DJL finds its
 * engines. Register an implementation in {@code
 * META-INF/services/ai.djl.distributed.backend.BackendProvider}.
 */
public interface BackendProvider {

    /**
     * Returns the names this provider answers to, its own first (e.g. "cpu", "gloo").
     *
     * @return the names
     */
    List<String> getNames();

    /**
     * Creates a backend for one group; blocks until its peers have joined.
     *
     * @param store the group's store, namespaced for this group and backend
     * @param rank this process's rank in the group
     * @param size the group's size
     * @param timeout the bound of every blocking step, setup included
     * @return the backend
     */
    Backend create(Store store, int rank, int size, Duration timeout);
}
