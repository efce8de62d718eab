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

import picocli.CommandLine;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The store's TLS files on a command line ({@code store-server}, {@code store}). Each option falls
 * back to its own variable: {@code --tls-cert} to {@value StoreTls#CERT_ENV}, {@code --tls-key} to
 * {@value StoreTls#KEY_ENV}, {@code --tls-ca} to {@value StoreTls#CA_ENV}; so overriding one file
 * on the command line keeps the other two of the environment.
 */
final class TlsOptions {

    @Option(
            names = "--tls-cert",
            paramLabel = "PEM",
            description = "certificate chain, leaf first (default $" + StoreTls.CERT_ENV + ")")
    private Path cert;

    @Option(
            names = "--tls-key",
            paramLabel = "PEM",
            description = "its PKCS#8 private key (default $" + StoreTls.KEY_ENV + ")")
    private Path key;

    @Option(
            names = "--tls-ca",
            paramLabel = "PEM",
            description =
                    "the authority's certificates: a client checks the server's chain against"
                            + " them, a server then requires client certificates (default $"
                            + StoreTls.CA_ENV
                            + ")")
    private Path ca;

    /**
     * Returns the first option given, for a message.
     *
     * @return {@code --tls-cert}, {@code --tls-key} or {@code --tls-ca}; {@code null} if none
     */
    String firstGiven() {
        return cert != null
                ? "--tls-cert"
                : key != null ? "--tls-key" : ca != null ? "--tls-ca" : null;
    }

    /**
     * Builds the settings: each option, else its variable of {@code env}.
     *
     * @param cmd the command, for a usage error
     * @param env the environment
     * @return the settings, or {@code null} when neither an option nor a variable names a file
     * @throws ParameterException if a certificate comes without its private key or a key without
     *     its certificate
     * @throws IllegalArgumentException if a file cannot be read or parsed; the message names where
     *     each file came from
     */
    StoreTls resolve(CommandLine cmd, Map<String, String> env) {
        Source c = Source.of("--tls-cert", cert, StoreTls.CERT_ENV, env);
        Source k = Source.of("--tls-key", key, StoreTls.KEY_ENV, env);
        Source a = Source.of("--tls-ca", ca, StoreTls.CA_ENV, env);
        if (c.file() == null && k.file() == null && a.file() == null) {
            return null;
        }
        if (c.file() == null && k.file() != null) {
            throw new ParameterException(cmd, missing(k, "certificate chain", c));
        }
        if (k.file() == null && c.file() != null) {
            throw new ParameterException(cmd, missing(c, "private key", k));
        }
        try {
            return StoreTls.builder()
                    .optCertificate(c.file(), k.file())
                    .optTrustedCertificates(a.file())
                    .build();
        } catch (IllegalArgumentException e) {
            List<String> from = new ArrayList<>();
            for (Source s : List.of(c, k, a)) {
                if (s.file() != null) {
                    from.add(s.name() + "=" + s.file());
                }
            }
            throw new IllegalArgumentException(
                    "TLS files " + String.join(", ", from) + ": " + e.getMessage(), e);
        }
    }

    private static String missing(Source given, String what, Source absent) {
        return given.name()
                + ": "
                + given.file()
                + " without its "
                + what
                + " (expected: "
                + absent.option()
                + " or $"
                + absent.variable()
                + " too)";
    }

    /** Where one file came from: the option, else its variable, else nowhere. */
    private record Source(String option, String variable, String name, Path file) {
        // name: the option's or the variable's, whichever gave the file

        static Source of(String option, Path given, String variable, Map<String, String> env) {
            if (given != null) {
                return new Source(option, variable, option, given);
            }
            String value = env.get(variable);
            // an empty variable is unset, as StoreTls.fromEnvironment reads it
            Path file = value == null || value.isEmpty() ? null : Path.of(value);
            return new Source(option, variable, "$" + variable, file);
        }
    }
}
