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

import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.distributed.rendezvous.Rendezvous;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.ServerSocket;
import java.time.Duration;

/** A Java rank 0 and a Python rank 1 meeting through PyTorch's own tcp:// rendezvous. */
@Timeout(180)
class RendezvousInteropTest {

    private static final String RANK1 =
            """
            import sys, datetime
            import torch.distributed as dist
            url = "tcp://127.0.0.1:%s?use_libuv=0" % sys.argv[1]
            store, rank, world = next(dist.rendezvous(url, 1, 2, timeout=datetime.timedelta(seconds=60)))
            assert (rank, world) == (1, 2), (rank, world)
            store.set("python", "rank 1")
            assert store.get("java") == b"rank 0", store.get("java")
            print("OK")
            """;

    @Test
    void javaRankZeroAndPythonRankOneMeet() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        try (PythonPeer py = PythonPeer.start(RANK1, Integer.toString(port));
                Rendezvous.Result rank0 =
                        Rendezvous.create(
                                "tcp://127.0.0.1:" + port, 0, 2, Duration.ofSeconds(120))) {
            // returns once the Python rank has counted itself on init/, as PyTorch's master does
            rank0.store().set("java", "rank 0");
            assertEquals("rank 1", rank0.store().getString("python"));
            py.assertSuccess(Duration.ofSeconds(150));
        }
    }
}
