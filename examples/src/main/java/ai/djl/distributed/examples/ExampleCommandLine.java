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

import picocli.CommandLine;
import picocli.CommandLine.MaxValuesExceededException;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.UnmatchedArgumentException;

import java.util.function.Supplier;

/**
 * How the examples read their command lines: picocli fills an options object whose fields carry
 * {@code @Option} annotations ({@code --name value} or {@code --name=value}, flags without a value,
 * {@link picocli.CommandLine.Mixin mixins} such as {@link GptTrainOptions}), and this class turns
 * picocli's refusals into the examples' messages, each naming the option, the value and what was
 * expected. Stateless and thread-safe; the options object is the caller's, filled in place.
 */
final class ExampleCommandLine {

    private ExampleCommandLine() {}

    /**
     * Fills an options object from a command line.
     *
     * @param options the annotated options, their fields holding the defaults
     * @param synopsis the first line of the usage, e.g. {@code usage: ddp_basics [options]}
     * @param args the command line
     * @param <T> the options' type
     * @return {@code options}, filled
     * @throws IllegalArgumentException on an unknown option ({@code unknown option: --x} and the
     *     usage), a missing value, a value given to a flag, or a value of the wrong type
     */
    static <T> T parse(T options, String synopsis, String... args) {
        CommandLine cmd = commandLine(options, synopsis);
        try {
            cmd.parseArgs(args);
        } catch (UnmatchedArgumentException e) {
            throw new IllegalArgumentException(
                    "unknown option: " + e.getUnmatched().get(0) + "\n" + usage(cmd), e);
        } catch (MissingParameterException e) {
            String name = name(e.getMissing().get(0));
            throw new IllegalArgumentException(
                    name + ": missing value (expected: " + name + " VALUE)", e);
        } catch (MaxValuesExceededException e) {
            throw flagWithValue(cmd.getCommandSpec(), args, e);
        } catch (ParameterException e) {
            throw badValue(e);
        }
        return options;
    }

    /**
     * Reads a command line for an example's {@code main}: on bad usage prints {@code name: reason}
     * (no stack trace) and exits with status 2, as {@code bin/djlrun} and {@code bin/djl-dist} do.
     * Only the reading is guarded: a failure of the run itself keeps its stack trace.
     *
     * @param name the example's name, e.g. {@code ddp_basics}
     * @param reader parses and checks the options, throwing {@link IllegalArgumentException}
     * @param <T> the options' type
     * @return the options
     */
    static <T> T parseOrExit(String name, Supplier<T> reader) {
        try {
            return reader.get();
        } catch (IllegalArgumentException e) {
            System.err.println(name + ": " + e.getMessage());
            System.exit(2);
            throw new AssertionError("unreachable", e);
        }
    }

    /**
     * Returns the usage text of an options object, generated from its annotations.
     *
     * @param options the annotated options
     * @param synopsis the first line of the usage
     * @return the usage, without a final newline
     */
    static String usage(Object options, String synopsis) {
        return usage(commandLine(options, synopsis));
    }

    private static String usage(CommandLine cmd) {
        return cmd.getUsageMessage().stripTrailing();
    }

    private static CommandLine commandLine(Object options, String synopsis) {
        CommandLine cmd = new CommandLine(options);
        // A value reaches the example as typed: picocli would replace "@file" by the file's
        // contents (a --prompt of "@notes" would become the notes), which djlrun never does.
        cmd.setExpandAtFiles(false);
        // a repeated option takes its last value, as djlrun's options do
        cmd.setOverwrittenOptionsAllowed(true);
        cmd.getCommandSpec()
                .usageMessage()
                .width(100)
                .synopsisHeading("")
                .customSynopsis(synopsis)
                .optionListHeading("options:%n")
                .sortOptions(false);
        return cmd;
    }

    // "--steps: x (expected: an integer)"; a converter of this project says what it expected
    private static IllegalArgumentException badValue(ParameterException e) {
        ArgSpec arg = e.getArgSpec();
        String value = e.getValue();
        if (arg == null || value == null) {
            return new IllegalArgumentException(e.getMessage(), e);
        }
        if (arg instanceof OptionSpec && arg.arity().max() == 0) {
            // picocli reads --flag=VALUE as a boolean; the examples' flags take none
            return new IllegalArgumentException(
                    name(arg) + ": takes no value (got '" + value + "')", e);
        }
        String expected = expectedNumber(arg.type(), value);
        if (expected == null) {
            expected = e.getCause() != null ? e.getCause().getMessage() : e.getMessage();
        }
        return new IllegalArgumentException(
                name(arg) + ": " + value + " (expected: " + expected + ")", e);
    }

    // what a number option takes: an integer (with its type's range when the value is an integer
    // beyond it) or a decimal number; null for another type
    private static String expectedNumber(Class<?> type, String value) {
        boolean digits = value.matches("[+-]?[0-9]+");
        if (type == int.class || type == Integer.class) {
            return digits
                    ? "an integer from " + Integer.MIN_VALUE + " to " + Integer.MAX_VALUE
                    : "an integer";
        }
        if (type == long.class || type == Long.class) {
            return digits
                    ? "an integer from " + Long.MIN_VALUE + " to " + Long.MAX_VALUE
                    : "an integer";
        }
        if (type == double.class
                || type == Double.class
                || type == float.class
                || type == Float.class) {
            return "a decimal number, e.g. 0.5 or 1e-3";
        }
        return null;
    }

    // picocli's exception names neither the flag nor the value: find them on the line
    private static IllegalArgumentException flagWithValue(
            CommandSpec spec, String[] args, ParameterException e) {
        for (String a : args) {
            int eq = a.indexOf('=');
            OptionSpec flag = eq > 0 ? spec.findOption(a.substring(0, eq)) : null;
            if (flag != null && flag.arity().max() == 0) {
                return new IllegalArgumentException(
                        a.substring(0, eq) + ": takes no value (got '" + a.substring(eq + 1) + "')",
                        e);
            }
        }
        return new IllegalArgumentException(e.getMessage(), e);
    }

    private static String name(ArgSpec arg) {
        return arg instanceof OptionSpec ? ((OptionSpec) arg).longestName() : arg.paramLabel();
    }
}
