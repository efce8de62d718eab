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
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.tcp.StoreTls;
import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TcpStoreServer;
import ai.djl.distributed.store.tcp.TlsFiles;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;

/**
 * PyTorch 2.6's TCPStore client against a Java server that requires a store secret, or TLS: it can
 * do neither, so it is refused at connect (its constructor raises) and never reads the key a Java
 * client that can set.
 */
@Timeout(180)
class PythonClientRefusedInteropTest {

    private static final String SCRIPT =
            """
            import sys, datetime
            import torch.distributed as dist
            port = int(sys.argv[1])
            try:
                s = dist.TCPStore("127.0.0.1", port, is_master=False, use_libuv=False,
                                  wait_for_workers=False, timeout=datetime.timedelta(seconds=10))
                print("GOT_IN", s.get("guarded_key"))
            except Exception as e:
                print("REFUSED", type(e).__name__, str(e).splitlines()[-1])
            """;

    @Test
    void aPythonClientIsRefusedByAServerThatRequiresASecret() throws Exception {
        String secret = "interop-secret";
        try (TcpStoreServer server =
                        TcpStoreServer.builder().optHost("127.0.0.1").optSecret(secret).build();
                TcpStore java = client(server).optSecret(secret).build()) {
            assertPythonRefused(server, java);
        }
    }

    @Test
    void aPythonClientIsRefusedByAServerWithTls(@TempDir Path dir) throws Exception {
        StoreTls tls = TlsFiles.make(dir, "djl-interop-ca").settings();
        try (TcpStoreServer server =
                        TcpStoreServer.builder().optHost("127.0.0.1").optTls(tls).build();
                TcpStore java = client(server).optTls(tls).build()) {
            assertPythonRefused(server, java);
        }
    }

    private static TcpStore.Builder client(TcpStoreServer server) {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(server.getPort())
                .optTimeout(Duration.ofSeconds(60));
    }

    private static void assertPythonRefused(TcpStoreServer server, TcpStore java) throws Exception {
        try (PythonPeer py = PythonPeer.start(SCRIPT, Integer.toString(server.getPort()))) {
            java.set("guarded_key", "not for python");
            String out = py.assertSuccess(Duration.ofSeconds(150));
            assertTrue(!out.contains("GOT_IN") && !out.contains("not for python"), out);
            // PyTorch's client checks its PING echo, which the server answers with a value no
            // process id can be
            String refused = py.awaitLine("REFUSED", Duration.ofSeconds(5));
            assertTrue(refused.contains("Ping failed"), refused);
            assertEquals(1, server.numKeys(), "only the Java client's key");
        }
    }
}
