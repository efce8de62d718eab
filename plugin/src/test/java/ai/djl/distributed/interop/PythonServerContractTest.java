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

import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreContractTest;
import ai.djl.distributed.store.tcp.TcpStore;

import java.time.Duration;

/**
 * The whole store contract run by the Java client against PyTorch 2.6's own TCPStore server (the
 * legacy one: no queues), a fresh server for every case.
 */
class PythonServerContractTest extends StoreContractTest {

    private static final String SERVER =
            """
            import datetime, time
            import torch.distributed as dist
            s = dist.TCPStore("127.0.0.1", 0, is_master=True, use_libuv=False,
                              wait_for_workers=False, timeout=datetime.timedelta(seconds=120))
            print("PORT", s.port, flush=True)
            time.sleep(600)
            """;

    private PythonPeer server;
    private long baseline;

    /** {@inheritDoc} */
    @Override
    protected Store createStore() throws Exception {
        server = PythonPeer.start(SERVER);
        int port = Integer.parseInt(server.awaitLine("PORT", Duration.ofSeconds(60)));
        TcpStore store =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(port)
                        .optTimeout(Duration.ofSeconds(30))
                        .build();
        baseline = store.numKeys();
        return store;
    }

    /** {@inheritDoc} */
    @Override
    protected Store connectAgain(Store store) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(((TcpStore) store).getPort())
                .optTimeout(Duration.ofSeconds(30))
                .build();
    }

    /** {@inheritDoc} */
    @Override
    protected long internalKeys() {
        return baseline;
    }

    /** {@inheritDoc} */
    @Override
    protected void cleanUp() {
        server.close();
    }
}
