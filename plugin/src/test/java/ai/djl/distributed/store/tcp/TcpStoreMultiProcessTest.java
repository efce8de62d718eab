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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Workers in separate JVMs meeting on one server; a worker killed mid-wait harms no one. */
@Timeout(180)
class TcpStoreMultiProcessTest {

    @Test
    void workersInSeparateProcessesMeetAndCountExactly() throws Exception {
        int world = 4;
        int adds = 250;
        try (TcpStore master =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(0)
                        .optServer(true)
                        .optWorldSize(world)
                        .optWaitForWorkers(false)
                        .optTimeout(Duration.ofSeconds(120))
                        .build()) {
            List<JavaProcess> workers = new ArrayList<>();
            try {
                for (int r = 1; r < world; ++r) {
                    workers.add(
                            JavaProcess.start(
                                    TcpStoreWorker.class,
                                    Integer.toString(master.getPort()),
                                    Integer.toString(r),
                                    Integer.toString(world),
                                    Integer.toString(adds)));
                }
                master.waitForWorkers(); // rank 0 counts itself and waits for the others
                for (int i = 0; i < adds; ++i) {
                    master.add("counter", 1);
                }
                if (master.add("barrier", 1) == world) {
                    master.set("barrier/last", "1");
                }
                master.waitFor(List.of("barrier/last"));
                for (JavaProcess w : workers) {
                    w.assertSuccess(Duration.ofSeconds(120));
                }
            } finally {
                workers.forEach(JavaProcess::close);
            }
            assertEquals(world * adds, master.add("counter", 0));
            for (int r = 1; r < world; ++r) {
                assertTrue(master.getString("rank/" + r).startsWith("pid "));
            }
        }
    }

    @Test
    void killedWaiterLeavesTheServerServingOthers() throws Exception {
        try (TcpStore master =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(0)
                        .optServer(true)
                        .optTimeout(Duration.ofSeconds(60))
                        .build()) {
            try (JavaProcess hanger =
                    JavaProcess.start(
                            TcpStoreWorker.class, Integer.toString(master.getPort()), "hang")) {
                master.waitFor(List.of("hanger/ready"));
                hanger.process().destroyForcibly();
                hanger.waitFor(Duration.ofSeconds(30));
            }
            // the server dropped the dead waiter and still serves; a later write to its key is fine
            master.set("never", "now");
            assertEquals("now", master.getString("never"));
            assertEquals(2, master.numKeys());
        }
    }
}
