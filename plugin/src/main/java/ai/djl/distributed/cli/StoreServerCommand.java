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

import ai.djl.distributed.store.tcp.NettyTransport;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/** {@code djl-dist store-server}: a standalone TcpStore server, until killed or interrupted. */
final class StoreServerCommand {

    private StoreServerCommand() {}

    static int run(List<String> argv) {
        Args args =
                new Args(
                        argv,
                        Set.of(
                                "host",
                                "port",
                                "world-size",
                                "io-threads",
                                "warm-up-ms",
                                "busy-poll-us"));
        if (!args.positional().isEmpty()) {
            throw new Args.UsageException("store-server takes no words: " + args.positional());
        }
        String host = args.get("host", "0.0.0.0");
        TcpStoreServer.Builder builder =
                TcpStoreServer.builder().optHost(host).optPort(args.getInt("port", 29500));
        if (args.has("io-threads")) {
            builder.optIoThreads(args.getInt("io-threads", 1));
        }
        // a fresh standalone server is at full speed from its first request (TcpStoreServer)
        builder.optWarmUp(
                Duration.ofMillis(
                        args.getInt(
                                "warm-up-ms", (int) TcpStoreServer.DEFAULT_WARM_UP.toMillis())));
        if (args.has("busy-poll-us")) {
            builder.optBusyPoll(Duration.ofNanos(1000L * args.getInt("busy-poll-us", 0)));
        }
        int worldSize = args.getInt("world-size", 0);
        if (args.has("world-size") && worldSize < 1) {
            throw new Args.UsageException("--world-size: " + worldSize + " (expected: at least 1)");
        }
        TcpStoreServer server = builder.build();
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
                        + (NettyTransport.isEpoll() ? "epoll" : "nio")
                        + ")");
        System.out.flush();
        try {
            if (worldSize > 0) {
                while (server.joinedWorkers() < worldSize && !server.isClosed()) {
                    Thread.sleep(10);
                }
                if (server.joinedWorkers() >= worldSize) {
                    System.out.println("all " + worldSize + " workers joined");
                    System.out.flush();
                }
            }
            stopped.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return 0;
    }
}
