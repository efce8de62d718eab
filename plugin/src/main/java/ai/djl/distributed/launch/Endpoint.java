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
