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

import ai.djl.distributed.launch.Endpoint;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Reads {@code HOST:PORT} (or {@code [v6-address]:PORT}) options for picocli; the message of a bad
 * value names it and what was expected. Stateless and thread-safe.
 */
final class EndpointConverter implements ITypeConverter<Endpoint> {

    /** {@inheritDoc} */
    @Override
    public Endpoint convert(String value) {
        try {
            return Endpoint.parse("HOST:PORT", value);
        } catch (IllegalArgumentException e) {
            // picocli prefixes the option's name: "Invalid value for option '--tcp': ..."
            throw new TypeConversionException(
                    "'" + value + "' (expected: HOST:PORT with a port from 1 to 65535)");
        }
    }

    /**
     * Checks that a host resolves, so that a typo is told as such rather than as a failure to
     * listen or a connect timeout. Blocks for one lookup, bounded by the resolver's own timeout.
     *
     * @param option the option that gave the host, for the message
     * @param host the host name or address
     * @throws IllegalArgumentException if the host does not resolve
     */
    static void checkResolves(String option, String host) {
        try {
            InetAddress.getByName(host);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(
                    option
                            + ": "
                            + host
                            + " does not resolve (expected: an address, or a host name this"
                            + " machine resolves)",
                    e);
        }
    }
}
