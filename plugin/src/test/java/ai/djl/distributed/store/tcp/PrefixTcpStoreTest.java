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
package ai.djl.distributed.store.tcp;

import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreContractTest;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The store contract on a {@link TcpStore} seen through a {@link PrefixStore}. */
class PrefixTcpStoreTest extends StoreContractTest {

    private TcpStore base;
    private final List<TcpStore> clients = new ArrayList<>();

    /** {@inheritDoc} */
    @Override
    protected Store createStore() {
        base =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(0)
                        .optServer(true)
                        .optWorldSize(1)
                        .optTimeout(Duration.ofSeconds(30))
                        .build();
        return new PrefixStore("pre", base);
    }

    /** {@inheritDoc} */
    @Override
    protected Store connectAgain(Store store) {
        // a PrefixStore does not own its store, so the test closes these clients itself
        TcpStore client =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(base.getPort())
                        .optTimeout(Duration.ofSeconds(30))
                        .build();
        clients.add(client);
        return new PrefixStore("pre", client);
    }

    /** {@inheritDoc} */
    @Override
    protected long internalKeys() {
        return 1;
    }

    /** {@inheritDoc} */
    @Override
    protected boolean hasQueues() {
        return true;
    }

    /** {@inheritDoc} */
    @Override
    protected boolean getOfAQueueReadsAnEmptyValue() {
        return true;
    }

    /** {@inheritDoc} */
    @Override
    protected void cleanUp() {
        clients.forEach(TcpStore::close);
        base.close();
    }
}
