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
import java.util.List;

/** {@code djl-dist store} with the {@code --tls-*} options, against a server with TLS. */
@Timeout(120)
class StoreTlsOptionsTest {

    @Test
    void theStoreCommandSpeaksTlsWithItsOptions(@TempDir Path dir) throws Exception {
        TlsFiles files = TlsFiles.make(dir, "djl-cli-ca");
        StoreTls tls =
                StoreTls.builder()
                        .optCertificate(files.chain, files.key)
                        .optTrustedCertificates(files.authority)
                        .build();
        try (TcpStoreServer server =
                TcpStoreServer.builder().optHost("127.0.0.1").optSecret(null).optTls(tls).build()) {
            String tcp = "127.0.0.1:" + server.getPort();
            String chain = files.chain.toString();
            String key = files.key.toString();
            String ca = files.authority.toString();
            // mutual TLS: the client's certificate and the authority
            assertEquals(
                    0,
                    Main.run(
                            List.of(
                                    "store",
                                    "--tcp",
                                    tcp,
                                    "--tls-cert",
                                    chain,
                                    "--tls-key",
                                    key,
                                    "--tls-ca",
                                    ca,
                                    "--timeout",
                                    "20",
                                    "set",
                                    "k",
                                    "v")));
            // the authority alone: the server refuses a client without a certificate
            assertEquals(
                    1,
                    Main.run(
                            List.of(
                                    "store",
                                    "--tcp",
                                    tcp,
                                    "--tls-ca",
                                    ca,
                                    "--timeout",
                                    "20",
                                    "set",
                                    "k2",
                                    "v")));
            // a certificate without its key is refused before connecting
            assertEquals(
                    1,
                    Main.run(
                            List.of(
                                    "store",
                                    "--tcp",
                                    tcp,
                                    "--tls-cert",
                                    chain,
                                    "--tls-ca",
                                    ca,
                                    "set",
                                    "k3",
                                    "v")));
            assertEquals(1, server.numKeys());
            try (TcpStore check =
                    TcpStore.builder()
                            .setHost("127.0.0.1")
                            .setPort(server.getPort())
                            .optSecret(null)
                            .optTls(tls)
                            .optTimeout(Duration.ofSeconds(20))
                            .build()) {
                assertArrayEquals("v".getBytes(StandardCharsets.UTF_8), check.get("k"));
            }
        }
    }
}
