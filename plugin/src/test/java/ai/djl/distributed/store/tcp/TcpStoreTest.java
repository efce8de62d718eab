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

import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreContractTest;

import java.time.Duration;

/** The store contract on {@link TcpStore}: a serving instance, and further clients of it. */
public class TcpStoreTest extends StoreContractTest {

    /** {@inheritDoc} */
    @Override
    protected Store createStore() {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(0)
                .optServer(true)
                .optWorldSize(1)
                .optTimeout(Duration.ofSeconds(30))
                .build();
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
        return 1; // init/
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
}
