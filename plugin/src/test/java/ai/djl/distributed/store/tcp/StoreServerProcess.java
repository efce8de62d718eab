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

import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * A child process of {@link TcpStoreServerMemoryTest}: a standalone server with the given limits,
 * in a JVM whose memory the test bounds. Prints its port, then serves until killed (or for five
 * minutes at most, so it never outlives a broken test for long).
 */
public final class StoreServerProcess {

    private StoreServerProcess() {}

    /**
     * Runs the server.
     *
     * @param args the request limit and the partial-request budget, in bytes
     * @throws InterruptedException if interrupted while serving
     */
    public static void main(String[] args) throws InterruptedException {
        try (TcpStoreServer server =
                TcpStoreServer.builder()
                        .optHost("127.0.0.1")
                        .optMaxRequestBytes(Long.parseLong(args[0]))
                        .optMaxPartialRequestBytes(Long.parseLong(args[1]))
                        .optReadTimeout(Duration.ofMinutes(5)) // only the budget acts
                        .build()) {
            System.out.println("listening on port " + server.getPort());
            System.out.flush();
            TimeUnit.MINUTES.sleep(5);
        }
    }
}
