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
package ai.djl.distributed.interop;

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.backend.Backend;
import ai.djl.distributed.backend.BackendContext;
import ai.djl.distributed.backend.cpu.CpuBackendProvider;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.tcp.TcpStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A healthy CPU group forms promptly over PyTorch's classic TCPStore server (torchrun's agent store
 * in Debian's build), whose compare_set wakes no waiter: two ranks, each on its own thread with its
 * own client.
 */
@Timeout(120)
class SetupOverPythonServerInteropTest {

    private static final String SERVER =
            """
            import datetime, time
            import torch.distributed as dist
            s = dist.TCPStore("127.0.0.1", 0, is_master=True, use_libuv=False,
                              wait_for_workers=False, timeout=datetime.timedelta(seconds=120))
            print("PORT", s.port, flush=True)
            time.sleep(600)
            """;

    private static final Duration TIMEOUT = Duration.ofSeconds(15);

    @Test
    void aHealthyGroupFormsPromptly() throws Exception {
        for (String transport : List.of("tcp", "auto")) {
            try (PythonPeer server = PythonPeer.start(SERVER)) {
                int port = Integer.parseInt(server.awaitLine("PORT", Duration.ofSeconds(60)));
                List<CompletableFuture<Long>> ranks = new ArrayList<>();
                for (int rank = 0; rank < 2; rank++) {
                    int r = rank;
                    ranks.add(
                            CompletableFuture.supplyAsync(
                                    () -> {
                                        long start = System.nanoTime();
                                        try (TcpStore client =
                                                TcpStore.builder()
                                                        .setHost("127.0.0.1")
                                                        .setPort(port)
                                                        .optTimeout(TIMEOUT)
                                                        .build()) {
                                            Store store = new PrefixStore(transport + "/", client);
                                            Backend b =
                                                    new CpuBackendProvider()
                                                            .create(
                                                                    new BackendContext(
                                                                            store,
                                                                            r,
                                                                            2,
                                                                            "cpu",
                                                                            TIMEOUT,
                                                                            Map.of(
                                                                                    "transport",
                                                                                    transport)));
                                            b.close();
                                        }
                                        return (System.nanoTime() - start) / 1_000_000;
                                    }));
                }
                for (int rank = 0; rank < 2; rank++) {
                    long ms = ranks.get(rank).get(60, TimeUnit.SECONDS);
                    assertTrue(
                            ms < 5_000,
                            "transport " + transport + ": rank " + rank + " took " + ms + " ms");
                }
            }
        }
    }
}
