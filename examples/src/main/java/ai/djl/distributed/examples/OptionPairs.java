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
