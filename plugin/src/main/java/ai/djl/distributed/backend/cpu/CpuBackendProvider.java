package ai.djl.distributed.backend.cpu;

import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendProvider;
import ai.djl.distributed.backend.cpu.transport.SocketInterfaces;
import ai.djl.distributed.backend.cpu.transport.TcpTransport;
import ai.djl.distributed.rendezvous.DistributedEnv;
import ai.djl.distributed.store.Store;

import java.time.Duration;
import java.util.List;

/**
 * Provides the {@link CpuBackend} under the names "cpu" and "gloo" (so that code written for
 * PyTorch's CPU backend keeps its name). Its ranks connect over TCP on the address {@link
 * SocketInterfaces} picks.
 */
public final class CpuBackendProvider implements BackendProvider {

    /** {@inheritDoc} */
    @Override
    public List<String> getNames() {
        return List.of(CpuBackend.NAME, "gloo");
    }

    /** {@inheritDoc} */
    @Override
    public Backend create(Store store, int rank, int size, Duration timeout) {
        var address = SocketInterfaces.localAddress(DistributedEnv.fromProcess());
        return new CpuBackend(TcpTransport.connect(store, rank, size, address, timeout), timeout);
    }
}
