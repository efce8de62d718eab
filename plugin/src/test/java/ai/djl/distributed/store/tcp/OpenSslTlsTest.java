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

import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslProvider;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The TLS contract on BoringSSL (Netty's tcnative, a test dependency here), the implementation a
 * user who adds it gets by default; and each implementation against the other.
 */
class OpenSslTlsTest extends TlsContractTest {

    @BeforeAll
    static void boringSslLoads() {
        assertTrue(
                OpenSsl.isAvailable(),
                "netty-tcnative-boringssl-static is a test dependency: "
                        + OpenSsl.unavailabilityCause());
        assertEquals(SslProvider.OPENSSL, StoreTls.PROVIDER, "the default with tcnative present");
    }

    @Override
    SslProvider provider() {
        return SslProvider.OPENSSL;
    }

    @Test
    void eachImplementationTalksToTheOther() {
        StoreTls jdk =
                StoreTls.builder()
                        .provider(SslProvider.JDK)
                        .optCertificate(job.chain, job.key)
                        .optTrustedCertificates(job.authority)
                        .build();
        StoreTls boring = mutual(job, job);
        for (StoreTls[] pair : new StoreTls[][] {{jdk, boring}, {boring, jdk}}) {
            try (TcpStoreServer server = server(pair[0]);
                    TcpStore client = client(server.getPort(), pair[1])) {
                client.set("k", new byte[] {7});
                assertEquals(7, client.get("k")[0]);
            }
        }
    }
}
