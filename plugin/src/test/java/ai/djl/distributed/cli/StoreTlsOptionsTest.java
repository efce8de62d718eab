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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import ai.djl.distributed.store.tcp.StoreTls;
import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TcpStoreServer;
import ai.djl.distributed.store.tcp.TlsFiles;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** {@code djl-dist store} with the {@code --tls-*} options, against a server with TLS. */
@Timeout(120)
class StoreTlsOptionsTest {

    @Test
    void theStoreCommandSpeaksTlsWithItsOptions(@TempDir Path dir) throws Exception {
        TlsFiles files = TlsFiles.make(dir, "djl-cli-ca");
        StoreTls tls = files.settings();
        try (TcpStoreServer server =
                TcpStoreServer.builder().optHost("127.0.0.1").optSecret(null).optTls(tls).build()) {
            String chain = files.chain.toString();
            String ca = files.authority.toString();
            int port = server.getPort();
            // mutual TLS: the client's certificate and the authority
            assertEquals(
                    0,
                    store(
                            port,
                            "--tls-cert",
                            chain,
                            "--tls-key",
                            files.key.toString(),
                            "--tls-ca",
                            ca,
                            "set",
                            "k",
                            "v"));
            // the authority alone: the server refuses a client without a certificate
            assertEquals(1, store(port, "--tls-ca", ca, "set", "k2", "v"));
            // a certificate without its key is refused before connecting
            assertEquals(1, store(port, "--tls-cert", chain, "--tls-ca", ca, "set", "k3", "v"));
            assertEquals(1, server.numKeys());
            try (TcpStore check =
                    TcpStore.builder()
                            .setHost("127.0.0.1")
                            .setPort(port)
                            .optSecret(null)
                            .optTls(tls)
                            .optTimeout(Duration.ofSeconds(20))
                            .build()) {
                assertArrayEquals("v".getBytes(StandardCharsets.UTF_8), check.get("k"));
            }
        }
    }

    /** Runs {@code djl-dist store --tcp 127.0.0.1:PORT --timeout 20 ARGS}; returns its status. */
    private static int store(int port, String... args) {
        List<String> line =
                new ArrayList<>(List.of("store", "--tcp", "127.0.0.1:" + port, "--timeout", "20"));
        line.addAll(List.of(args));
        return Main.run(line);
    }
}
