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
package ai.djl.distributed.launch;

/**
 * A host and a port, as written on a command line: {@code host:port}, or {@code [v6-address]:port}.
 * Immutable; shared by the launcher and {@code bin/djl-dist}.
 *
 * @param host the host name or address, without brackets
 * @param port the port
 */
public record Endpoint(String host, int port) {

    /**
     * Parses {@code host:port}.
     *
     * @param name what the text is, for messages (e.g. {@code --rdzv-endpoint})
     * @param text the text
     * @return the endpoint
     * @throws IllegalArgumentException naming the text if it is not {@code HOST:PORT} with a port
     *     from 1 to 65535
     */
    public static Endpoint parse(String name, String text) {
        int colon = text.lastIndexOf(':');
        if (colon <= 0 || colon < text.lastIndexOf(']') || colon == text.length() - 1) {
            throw new IllegalArgumentException(
                    name + ": '" + text + "' (expected: HOST:PORT, e.g. node0:29400)");
        }
        String host = text.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(text.substring(colon + 1));
        } catch (NumberFormatException e) {
            port = -1;
        }
        if (host.isEmpty() || port < 1 || port > 65535) {
            throw new IllegalArgumentException(
                    name + ": '" + text + "' (expected: HOST:PORT with a port from 1 to 65535)");
        }
        return new Endpoint(host, port);
    }

    /** {@inheritDoc} */
    @Override
    public String toString() {
        return (host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":" + port;
    }
}
