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

import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.ConnectException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The partial-request budget measured on a real process: a server in a JVM with 256 MiB of heap
 * (and 64 MiB of direct memory), which exits on the first OutOfMemoryError, survives senders that
 * together announce and send far more than that, and keeps serving.
 */
@Timeout(120)
class TcpStoreServerMemoryTest {

    private static final int MIB = 1 << 20;

    private static int portOf(JavaProcess child) throws InterruptedException {
        Pattern listening = Pattern.compile("listening on port (\\d+)");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() - deadline < 0) {
            Matcher m = listening.matcher(child.output());
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            if (!child.process().isAlive()) {
                break;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("the server did not start:\n" + child.output());
    }

    @Test
    void aServerWithLittleMemorySurvivesLargeSlowSenders() throws Exception {
        int senders = 24;
        long request = 16 * MIB;
        long budget = 48 * MIB;
        // 24 senders announcing 16 MiB each: 384 MiB, past the child's 256 MiB of heap
        try (JavaProcess child =
                JavaProcess.start(
                        StoreServerProcess.class,
                        Map.of(
                                "JAVA_TOOL_OPTIONS",
                                "-XX:+ExitOnOutOfMemoryError -XX:MaxDirectMemorySize=64m"),
                        Long.toString(request),
                        Long.toString(budget))) {
            int port = portOf(child);
            List<SlowSender> attack = new ArrayList<>();
            try {
                for (int i = 0; i < senders; ++i) {
                    // 15 of the 16 MiB really sent: the server holds real bytes, not just claims
                    try {
                        attack.add(SlowSender.partialSet(port, request - 64, 15 * MIB));
                    } catch (ConnectException e) {
                        throw new AssertionError("the server died:\n" + child.output(), e);
                    }
                }
                try (HealthyClient healthy = new HealthyClient(port)) {
                    Thread.sleep(1000);
                    assertTrue(child.process().isAlive(), "the server died:\n" + child.output());
                    System.out.println("memory: " + healthy.finish());
                }
                long closed = 0;
                for (SlowSender s : attack) {
                    closed += s.closedWithin(Duration.ofMillis(100)) ? 1 : 0;
                }
                // at most 3 senders of 16 MiB fit in 48 MiB: the others were closed
                assertTrue(closed >= senders - budget / request, closed + " senders closed");
            } finally {
                for (SlowSender s : attack) {
                    s.close();
                }
            }
            assertTrue(child.process().isAlive(), "the server died:\n" + child.output());
        }
    }
}
