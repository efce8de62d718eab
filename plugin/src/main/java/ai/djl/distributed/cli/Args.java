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

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Command-line arguments: {@code --name value} options (anywhere) and positional words. A bare
 * {@code --} ends the options, so a value may itself start with {@code --}.
 */
final class Args {

    private final Map<String, String> options = new HashMap<>();
    private final List<String> positional = new ArrayList<>();

    /**
     * Parses arguments.
     *
     * @param args the words
     * @param known the option names accepted, without dashes
     * @throws UsageException on an unknown option or a missing value
     */
    Args(List<String> args, Set<String> known) {
        boolean optionsEnded = false;
        for (int i = 0; i < args.size(); ++i) {
            String a = args.get(i);
            if (!optionsEnded && a.equals("--")) {
                optionsEnded = true;
            } else if (!optionsEnded && a.startsWith("--")) {
                String name = a.substring(2);
                String value = null;
                int eq = name.indexOf('=');
                if (eq >= 0) {
                    value = name.substring(eq + 1);
                    name = name.substring(0, eq);
                }
                if (!known.contains(name)) {
                    throw new UsageException(
                            "unknown option --" + name + " (expected one of " + known + ")");
                }
                if (value == null) {
                    if (i + 1 >= args.size()) {
                        throw new UsageException("option --" + name + " needs a value");
                    }
                    value = args.get(++i);
                }
                options.put(name, value);
            } else {
                positional.add(a);
            }
        }
    }

    String get(String name, String fallback) {
        return options.getOrDefault(name, fallback);
    }

    boolean has(String name) {
        return options.containsKey(name);
    }

    int getInt(String name, int fallback) {
        String v = options.get(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + ": '" + v + "' (expected: an integer)");
        }
    }

    double getDouble(String name, double fallback) {
        String v = options.get(name);
        if (v == null) {
            return fallback;
        }
        try {
            return Double.parseDouble(v);
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + ": '" + v + "' (expected: a number)");
        }
    }

    List<String> positional() {
        return positional;
    }

    /** A command line that does not fit the usage; the message says how. */
    static final class UsageException extends RuntimeException {

        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }
}
