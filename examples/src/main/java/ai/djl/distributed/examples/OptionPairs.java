package ai.djl.distributed.examples;

import java.util.Set;

/**
 * How the examples read their command lines: {@code --name value} or {@code --name=value} pairs,
 * and flags that take no value. Each example's options class says what the names mean.
 */
final class OptionPairs {

    /** Receives one option of a command line. */
    interface Handler {

        /**
         * Takes one option.
         *
         * @param name the option as written, e.g. {@code --epochs}
         * @param value its value, or {@code null} for a flag
         */
        void accept(String name, String value);
    }

    private OptionPairs() {}

    /**
     * Hands each option of a command line to a handler, in order.
     *
     * @param args the command line
     * @param flags the options that take no value
     * @param handler what to do with each option
     * @throws IllegalArgumentException if the last option lacks its value, or a flag has one; and
     *     whatever the handler throws
     */
    static void parse(String[] args, Set<String> flags, Handler handler) {
        for (int i = 0; i < args.length; i++) {
            String name = args[i];
            if (flags.contains(name)) {
                handler.accept(name, null);
                continue;
            }
            String value;
            int eq = name.indexOf('=');
            if (eq > 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
                if (flags.contains(name)) {
                    throw new IllegalArgumentException(
                            name + ": takes no value (got '" + value + "')");
                }
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException(
                        name + ": missing value (expected: " + name + " VALUE)");
            }
            handler.accept(name, value);
        }
    }
}
