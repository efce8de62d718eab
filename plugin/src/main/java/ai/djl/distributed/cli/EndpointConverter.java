package ai.djl.distributed.cli;

import ai.djl.distributed.launch.Endpoint;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

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
}
