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
package ai.djl.distributed.cli;

import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.tcp.NettyTransport;
import ai.djl.distributed.store.tcp.StoreProtocol;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;

/** {@code djl-dist store-server}: a standalone TcpStore server, until killed or interrupted. */
@Command(
        name = "store-server",
        mixinStandardHelpOptions = true,
        description = "A TcpStore server in the foreground; prints 'listening on H:P'.")
final class StoreServerCommand implements Callable<Integer> {

    private static final Logger logger = LoggerFactory.getLogger(StoreServerCommand.class);

    @Spec private CommandSpec spec;

    @Option(names = "--host", paramLabel = "H", description = "address to bind; default 0.0.0.0")
    private String host = "0.0.0.0";

    @Option(
            names = "--port",
            paramLabel = "P",
            description = "port; 0 for a free one; default 29500")
    private int port = 29500;

    @Option(
            names = {"--world-size", "--world_size"},
            paramLabel = "N",
            description = "print 'all N workers joined' once N clients have joined")
    private Integer worldSize;

    @Option(
            names = {"--io-threads", "--io_threads"},
            paramLabel = "T",
            description = "Netty event-loop threads; default: the server's own choice")
    private Integer ioThreads;

    @Option(
            names = {"--warm-up-ms", "--warm_up_ms"},
            paramLabel = "MS",
            description = "warm-up of the request path before listening; default 1500")
    private int warmUpMs = (int) TcpStoreServer.DEFAULT_WARM_UP.toMillis();

    @Option(
            names = {"--busy-poll-us", "--busy_poll_us"},
            paramLabel = "US",
            description = "busy polling after traffic, in microseconds, 0 for none; default 50")
    private int busyPollUs = (int) (TcpStoreServer.DEFAULT_BUSY_POLL.toNanos() / 1000);

    @Option(
            names = {"--no-direct", "--no_direct"},
            description =
                    "serve every connection through its Netty pipeline, none straight from"
                            + " io_uring (default: the system property "
                            + TcpStoreServer.DIRECT_PROPERTY
                            + ", else direct)")
    private boolean noDirect;

    @Mixin private TlsOptions tls = new TlsOptions();

    /**
     * Serves until the JVM is stopped; blocks until then.
     *
     * @return 0
     */
    @Override
    public Integer call() {
        if (worldSize != null && worldSize < 1) {
            throw new ParameterException(
                    spec.commandLine(), "--world-size: " + worldSize + " (expected: at least 1)");
        }
        if (port < 0 || port > 65535) {
            throw new ParameterException(
                    spec.commandLine(), "--port: " + port + " (expected: 0 to 65535)");
        }
        if (ioThreads != null && ioThreads < 1) {
            throw new ParameterException(
                    spec.commandLine(), "--io-threads: " + ioThreads + " (expected: at least 1)");
        }
        if (warmUpMs < 0) {
            throw new ParameterException(
                    spec.commandLine(), "--warm-up-ms: " + warmUpMs + " (expected: at least 0)");
        }
        if (busyPollUs < 0) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--busy-poll-us: " + busyPollUs + " (expected: at least 0)");
        }
        EndpointConverter.checkResolves("--host", host);
        TcpStoreServer.Builder builder = TcpStoreServer.builder().optHost(host).optPort(port);
        if (ioThreads != null) {
            builder.optIoThreads(ioThreads);
        }
        // a fresh standalone server is at full speed from its first request (TcpStoreServer)
        builder.optWarmUp(Duration.ofMillis(warmUpMs));
        builder.optBusyPoll(Duration.ofNanos(1000L * busyPollUs));
        if (noDirect) {
            builder.optDirectConnections(false);
        }
        // each --tls-* option, else its DJL_DIST_STORE_TLS_* variable
        builder.optTls(tls.resolve(spec.commandLine(), System.getenv()));
        int expected = worldSize == null ? 0 : worldSize;
        TcpStoreServer server = builder.build();
        // The warm-up's garbage fills most of the young generation; left there, the first
        // collection falls inside the job's rendezvous and copies thousands of new connections
        // (88 ms of a 1-s rendezvous of 9,000 here). Collected now, before this command says it
        // listens (a client that connects meanwhile waits out the pause, tens of milliseconds).
        System.gc();
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime()
                .addShutdownHook(
                        new Thread(
                                () -> {
                                    server.close();
                                    stopped.countDown();
                                },
                                "djl-store-server-shutdown"));
        System.out.println(
                "djl-dist store-server listening on "
                        + host
                        + ":"
                        + server.getPort()
                        + " ("
                        + NettyTransport.name()
                        + ")");
        System.out.flush();
        try {
            if (expected > 0 && awaitWorkers(server, expected)) {
                System.out.println("all " + expected + " workers joined");
                System.out.flush();
            }
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }

    /**
     * Polls the {@code init/} counter until {@code expected} workers have joined or the server
     * closes. Any client may write that key: a value that is no counter (a raw {@code SET init/} of
     * 100 digits) only holds the notice back, with one WARN, until a counter is back there; the
     * server keeps serving throughout.
     *
     * @return whether they joined
     */
    static boolean awaitWorkers(TcpStoreServer server, long expected) throws InterruptedException {
        boolean warned = false;
        while (!server.isClosed()) {
            try {
                if (server.joinedWorkers() >= expected) {
                    return true;
                }
                warned = false;
            } catch (StoreException e) {
                if (!warned) {
                    warned = true;
                    logger.warn(
                            "cannot count the joined workers, {} holds no counter: {}; the"
                                    + " server keeps serving, and waits for a counter there to"
                                    + " report 'all {} workers joined'",
                            StoreProtocol.INIT_KEY,
                            e.getMessage(),
                            expected);
                }
            }
            Thread.sleep(10);
        }
        return false;
    }
}
