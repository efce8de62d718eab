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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.tcp.StoreTls;
import ai.djl.distributed.store.tcp.TcpStoreServer;
import ai.djl.distributed.store.tcp.TlsFiles;
import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

/** {@code djl-dist bench}: what it checks before it starts, and the TLS of its local warm-up. */
@Timeout(120)
class BenchChecksTest {

    @TempDir Path tmp;

    /** What a command returned and wrote to its standard error. */
    record Result(int code, String err) {}

    private static Result run(String... args) {
        StringWriter err = new StringWriter();
        CommandLine cmd = Main.commandLine();
        cmd.setErr(new PrintWriter(err, true));
        return new Result(cmd.execute(args), err.toString());
    }

    /** Sizes the ranks cannot split are bad usage, before any rank starts. */
    @Test
    void collectiveSizesMustSplitIntoWholeElementsPerRank() {
        Result r = run("bench", "collectives", "--world-size", "3", "--ops", "reduce_scatter");
        assertEquals(2, r.code(), r.err());
        assertTrue(
                r.err()
                        .startsWith(
                                "--sizes: 4096 with reduce_scatter and --world-size 3 (expected: a"
                                        + " multiple of 12 bytes"),
                r.err());
        // all_gather's input is each rank's share of the message too
        r = run("bench", "collectives", "--world-size", "3", "--ops", "all_gather");
        assertEquals(2, r.code(), r.err());
        assertTrue(
                r.err()
                        .startsWith(
                                "--sizes: 4096 with all_gather and --world-size 3 (expected: a"
                                        + " multiple of 12 bytes"),
                r.err());
        r =
                run(
                        "bench",
                        "collectives",
                        "--world-size",
                        "2",
                        "--ops",
                        "all_to_all",
                        "--sizes",
                        "4M,1020");
        assertEquals(2, r.code(), r.err());
        assertTrue(
                r.err()
                        .startsWith(
                                "--sizes: 1020 with all_to_all and --world-size 2 (expected: a"
                                        + " multiple of 8 bytes"),
                r.err());
        r = run("bench", "collectives", "--world-size", "1", "--ops", "all_reduce", "--sizes", "6");
        assertEquals(2, r.code(), r.err());
        assertTrue(r.err().startsWith("--sizes: 6 (expected: a multiple of 4 bytes"), r.err());
    }

    /**
     * A client machine holds the authority alone ({@code DJL_DIST_STORE_TLS_CA}): enough to measure
     * a TLS server, not to run the private server of the local warm-up, which warms up without TLS
     * instead of failing before it measures.
     */
    @Test
    void rendezvousWithTheAuthorityAloneWarmsUpLocallyAndMeasures() throws Exception {
        TlsFiles files = TlsFiles.make(tmp.resolve("tls"), "bench-ca");
        StoreTls serverOnly = StoreTls.builder().optCertificate(files.chain, files.key).build();
        try (TcpStoreServer server =
                TcpStoreServer.builder()
                        .optHost("127.0.0.1")
                        .optSecret(null)
                        .optTls(serverOnly)
                        .optWarmUp(Duration.ZERO)
                        .build()) {
            try (JavaProcess p =
                    JavaProcess.startIsolated(
                            Main.class,
                            Map.of(StoreTls.CA_ENV, files.authority.toString()),
                            "bench",
                            "store-rendezvous",
                            "--tcp",
                            "127.0.0.1:" + server.getPort(),
                            "--clients",
                            "4",
                            "--repeat",
                            "1",
                            "--timeout",
                            "30")) {
                assertEquals(0, p.waitFor(Duration.ofSeconds(90)), p.output());
                String out = p.output();
                assertTrue(out.contains("store-rendezvous clients=4 seconds="), out);
                assertTrue(out.contains("warming up locally without TLS"), out);
                assertFalse(out.contains("djl-dist:"), out);
            }
        }
    }
}
