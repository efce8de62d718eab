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

import ai.djl.distributed.store.tcp.StoreTls;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * The store's TLS files on a command line ({@code store-server}, {@code store}); any of them
 * replaces the {@code DJL_DIST_STORE_TLS_*} variables, which apply otherwise.
 */
final class TlsOptions {

    @Option(
            names = "--tls-cert",
            paramLabel = "PEM",
            description = "certificate chain, leaf first (default $DJL_DIST_STORE_TLS_CERT)")
    private Path cert;

    @Option(
            names = "--tls-key",
            paramLabel = "PEM",
            description = "its PKCS#8 private key (default $DJL_DIST_STORE_TLS_KEY)")
    private Path key;

    @Option(
            names = "--tls-ca",
            paramLabel = "PEM",
            description =
                    "the authority's certificates: a client checks the server's chain against"
                            + " them, a server then requires client certificates (default"
                            + " $DJL_DIST_STORE_TLS_CA)")
    private Path ca;

    /**
     * Returns whether any option was given.
     *
     * @return {@code false} when the environment applies
     */
    boolean given() {
        return cert != null || key != null || ca != null;
    }

    /**
     * Builds the settings of the options.
     *
     * @return the settings
     * @throws IllegalArgumentException if only one of {@code --tls-cert} and {@code --tls-key} is
     *     given, or a file cannot be read or parsed ({@link StoreTls.Builder#build()})
     */
    StoreTls build() {
        return StoreTls.builder().optCertificate(cert, key).optTrustedCertificates(ca).build();
    }
}
