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
import java.util.List;

/**
 * A child process of {@link TcpStoreMultiProcessTest}: joins the parent's server as a worker, adds
 * to a shared counter, publishes its rank and meets everyone at a store barrier.
 */
public final class TcpStoreWorker {

    private TcpStoreWorker() {}

    /**
     * Runs the worker.
     *
     * @param args port, rank, world size, adds; or port and "hang" to block on a key forever
     */
    public static void main(String[] args) {
        int port = Integer.parseInt(args[0]);
        if (args[1].equals("hang")) {
            try (TcpStore store =
                    TcpStore.builder()
                            .setHost("127.0.0.1")
                            .setPort(port)
                            .optTimeout(Duration.ofSeconds(120))
                            .build()) {
                store.set("hanger/ready", "1");
                store.get("never");
            }
            return;
        }
        int rank = Integer.parseInt(args[1]);
        int world = Integer.parseInt(args[2]);
        int adds = Integer.parseInt(args[3]);
        try (TcpStore store =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(port)
                        .optWorldSize(world)
                        .optTimeout(Duration.ofSeconds(60))
                        .build()) {
            for (int i = 0; i < adds; ++i) {
                store.add("counter", 1);
            }
            store.set("rank/" + rank, "pid " + ProcessHandle.current().pid());
            if (store.add("barrier", 1) == world) {
                store.set("barrier/last", "1");
            }
            store.waitFor(List.of("barrier/last"));
            System.out.println("worker " + rank + " saw counter " + store.add("counter", 0));
        }
    }
}
