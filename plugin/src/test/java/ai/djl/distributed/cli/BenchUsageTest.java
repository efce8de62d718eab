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

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.ServerSocket;
import java.util.List;

@Timeout(120)
class BenchUsageTest {

    @Test
    void badBenchOptionsAreBadUsage() throws Exception {
        int closed;
        try (ServerSocket probe = new ServerSocket(0)) {
            closed = probe.getLocalPort(); // nothing listens there once closed
        }
        String tcp = "127.0.0.1:" + closed;
        List<List<String>> bad =
                List.of(
                        // ran no rank and exited 0
                        List.of("bench", "collectives", "--world-size", "0"),
                        // each failed inside its ranks, after starting them, with status 1
                        List.of("bench", "collectives", "--world-size", "1", "--ops", "foo"),
                        List.of("bench", "collectives", "--world-size", "1", "--transport", "x"),
                        // overflowed to a negative size
                        List.of(
                                "bench",
                                "collectives",
                                "--world-size",
                                "1",
                                "--sizes",
                                "9999999999G"),
                        List.of("bench", "collectives", "--world-size", "1", "--sizes", "-4K"),
                        // "djl-dist: null" and "count < 0", status 1
                        List.of("bench", "store-ops", "--tcp", tcp, "--clients", "0"),
                        List.of("bench", "store-ops", "--tcp", tcp, "--rounds", "0"),
                        List.of(
                                "bench",
                                "store-rendezvous",
                                "--tcp",
                                tcp,
                                "--warm-up",
                                "none",
                                "--clients",
                                "-1"),
                        List.of(
                                "bench",
                                "store-rendezvous",
                                "--tcp",
                                tcp,
                                "--warm-up",
                                "none",
                                "--repeat",
                                "0"));
        for (List<String> line : bad) {
            assertEquals(2, Main.run(line), line.toString());
        }
    }
}
