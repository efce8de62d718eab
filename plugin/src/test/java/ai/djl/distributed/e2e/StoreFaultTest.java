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
package ai.djl.distributed.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.launch.LauncherProcess;
import ai.djl.distributed.store.tcp.StoreProtocol;
import ai.djl.distributed.store.tcp.TcpStore;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The launcher's store server under faults, with real workers as its clients: killed while they
 * block on it, and fed hostile bytes while they use it. The store does not depend on the CPU
 * backend's transport, so these run once, over the default one.
 */
@Timeout(120)
class StoreFaultTest {

    @Test
    void workersBlockedOnAKilledStoreServerFailNamingItAndExit(@TempDir Path reports)
            throws Exception {
        SharedMemoryFiles shm = SharedMemoryFiles.snapshot();
        try (LauncherProcess djlrun =
                Faults.launch(
                        Map.of("FAULT_OUT", reports.toString()),
                        "auto",
                        60_000,
                        "--nproc-per-node",
                        "2",
                        FaultWorker.class.getName(),
                        "group:blocked",
                        "block:never")) {
            djlrun.awaitLines("READY", 2, Duration.ofSeconds(60));
            Set<Long> workers = djlrun.workerPids();
            Thread.sleep(200); // both are inside get("never")
            long killed = System.currentTimeMillis();
            // The launcher serves the store: SIGKILL it alone, its workers carry on.
            djlrun.process().destroyForcibly();
            // Its output goes with it: the workers' reports are in their files.
            Faults.assertAllExited(workers, Duration.ofSeconds(20), () -> read(reports));
            String out = read(reports);
            for (int rank = 0; rank < 2; rank++) {
                String failed = Faults.line(out, rank, "FAILED blocked");
                assertTrue(failed.contains("StoreException"), failed);
                assertTrue(failed.contains("127.0.0.1:"), failed);
                assertTrue(failed.contains("never]"), failed);
                long seen = Faults.at(failed) - killed;
                assertTrue(seen < 5_000, "seen after " + seen + " ms: " + failed);
            }
            shm.assertNothingNew();
        }
    }

    /** The workers' report files, each line prefixed as the launcher would prefix it. */
    private static String read(Path reports) {
        StringBuilder all = new StringBuilder();
        for (int rank = 0; rank < 2; rank++) {
            Path log = reports.resolve("rank" + rank + ".log");
            try {
                for (String line : Files.readAllLines(log)) {
                    all.append("[rank").append(rank).append("]: ").append(line).append('\n');
                }
            } catch (IOException e) {
                all.append("(no ").append(log).append(")\n");
            }
        }
        return all.toString();
    }

    @Test
    void hostileBytesCloseOnlyTheirConnectionWhileWorkersUseTheStore() throws Exception {
        try (LauncherProcess djlrun =
                Faults.launch(
                        "auto",
                        60_000,
                        "--nproc-per-node",
                        "2",
                        FaultWorker.class.getName(),
                        "group:hostile",
                        "port",
                        "allreduce:1000",
                        "storeops-until:stop",
                        "allreduce:1000")) {
            djlrun.awaitLines("READY", 2, Duration.ofSeconds(60));
            int port = Integer.parseInt(Faults.line(djlrun.stdout(), 0, "PORT").substring(5));
            Random random = new Random(42);
            byte[] noise = new byte[64 << 10];
            random.nextBytes(noise);
            noise[0] = 7; // not VALIDATE: a stream of noise, as a port scanner sends
            assertClosed(port, noise);
            assertClosed(
                    port,
                    validated(
                            wire ->
                                    wire.put((byte) 1)
                                            .putLong(2)
                                            .put((byte) '/')
                                            .put((byte) 'k')
                                            .putLong(1L << 40))); // SET of a 1 TiB value
            assertClosed(port, validated(wire -> wire.put((byte) 200))); // no such query
            assertClosed(port, validated(wire -> wire.put((byte) 6).putLong(Long.MAX_VALUE)));
            try (TcpStore stop =
                    TcpStore.builder()
                            .setHost("127.0.0.1")
                            .setPort(port)
                            .optTimeout(Duration.ofSeconds(30))
                            .build()) {
                // The workers' store is the launcher's, seen through the attempt's prefix.
                stop.set("/worker/attempt_0/stop", "now");
            }
            assertEquals(0, djlrun.waitFor(Faults.WAIT), djlrun::describe);
            String out = djlrun.stdout();
            for (int rank = 0; rank < 2; rank++) {
                long rounds = Long.parseLong(Faults.line(out, rank, "OK storeops").substring(12));
                assertTrue(rounds > 0, out);
                assertEquals(2, Faults.count(out, "[rank" + rank + "]: OK allreduce 1000"), out);
                assertTrue(out.contains("[rank" + rank + "]: DONE rank " + rank), out);
            }
            Faults.assertAllExited(djlrun);
        }
    }

    /** A connection that validates as PyTorch's client does, then sends what {@code body} puts. */
    private static byte[] validated(java.util.function.Consumer<ByteBuffer> body) {
        ByteBuffer wire = ByteBuffer.allocate(256).order(ByteOrder.LITTLE_ENDIAN);
        wire.put((byte) 0).putInt(StoreProtocol.MAGIC);
        body.accept(wire);
        byte[] bytes = new byte[wire.position()];
        wire.flip().get(bytes);
        return bytes;
    }

    /** Sends bytes on a new connection and asserts that the server closes it within seconds. */
    private static void assertClosed(int port, byte[] bytes) throws IOException {
        try (Socket s = new Socket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            OutputStream out = s.getOutputStream();
            try {
                out.write(bytes);
                out.flush();
            } catch (IOException e) {
                return; // closed while we were still writing
            }
            InputStream in = s.getInputStream();
            try {
                while (in.read() >= 0) {
                    // a server may answer VALIDATE-less noise with nothing but the close
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the server kept a hostile connection open", e);
            } catch (IOException e) {
                // reset by the server: closed too
            }
        }
    }
}
