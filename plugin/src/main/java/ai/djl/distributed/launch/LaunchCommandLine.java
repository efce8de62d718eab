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

import picocli.CommandLine;
import picocli.CommandLine.Help;
import picocli.CommandLine.Help.Column;
import picocli.CommandLine.Help.TextTable;
import picocli.CommandLine.MaxValuesExceededException;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.Model.PositionalParamSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;

/**
 * djlrun's command line on picocli: {@code djlrun [options] TARGET [args...]}. picocli reads {@code
 * --name value} and {@code --name=value}, torchrun's underscore spellings, {@code --} and {@code
 * -h}; takes the last value of an option given twice, as torchrun's argparse does; stops at the
 * first word that is not an option (TARGET: everything after it belongs to the workers); fills what
 * the command line lacks from the options' environment variables; and writes {@code --help}. Each
 * call builds its own command, so this class is thread-safe.
 */
final class LaunchCommandLine {

    private static final int OPTION_COLUMN = 30;
    private static final int WIDTH = 100;

    private LaunchCommandLine() {}

    /**
     * Parses a command line.
     *
     * @param args the command line, without the program name
     * @param env the environment, read for the options the command line lacks (an empty value
     *     counts as unset)
     * @return what picocli read; the values of the options are strings, still to be checked
     * @throws IllegalArgumentException naming an unknown option, or an option without its value
     */
    static ParseResult parse(List<String> args, Map<String, String> env) {
        CommandLine cmd = new CommandLine(spec(env));
        // What follows TARGET is the workers' as typed: picocli would replace an @file argument
        // there (anywhere on the line) by the file's contents, which torchrun never does.
        cmd.setExpandAtFiles(false);
        try {
            return cmd.parseArgs(args.toArray(new String[0]));
        } catch (UnmatchedArgumentException e) {
            throw new IllegalArgumentException(
                    "unknown option "
                            + e.getUnmatched().get(0)
                            + " (expected one of "
                            + Arrays.stream(LaunchOption.values())
                                    .map(o -> "--" + o.optionName())
                                    .collect(Collectors.joining(", "))
                            + ", then TARGET)",
                    e);
        } catch (MissingParameterException e) {
            String name = nameOf(e.getMissing().get(0));
            throw new IllegalArgumentException(
                    name + ": missing value (expected: " + name + " VALUE)", e);
        } catch (MaxValuesExceededException e) {
            // a value given to a flag (--standalone=yes); picocli's exception names neither
            throw flagWithValue(args)
                    .orElseGet(() -> new IllegalArgumentException(e.getMessage(), e));
        } catch (ParameterException e) {
            throw new IllegalArgumentException(e.getMessage(), e);
        }
    }

    private static Optional<IllegalArgumentException> flagWithValue(List<String> args) {
        for (String a : args) {
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                Optional<LaunchOption> flag =
                        LaunchOption.byName(a.substring(2, eq)).filter(o -> !o.takesValue());
                if (flag.isPresent()) {
                    return Optional.of(
                            new IllegalArgumentException(
                                    "--"
                                            + flag.get().optionName()
                                            + ": takes no value (got '"
                                            + a.substring(eq + 1)
                                            + "')"));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Returns the usage text that {@code --help} prints, generated from the options.
     *
     * @return the usage, without a final newline
     */
    static String usage() {
        return new CommandLine(spec(Map.of())).getUsageMessage().stripTrailing();
    }

    /**
     * Returns where an option's value came from, as the messages name it.
     *
     * @param parsed the parsed command line
     * @param option the option
     * @return {@code --name} when given on the command line, else {@code $VARIABLE}
     */
    static String source(ParseResult parsed, LaunchOption option) {
        String dashed = "--" + option.optionName();
        if (parsed.hasMatchedOption(dashed)) {
            return dashed;
        }
        return option.environmentVariable().map(n -> "$" + n).orElse(dashed);
    }

    private static String nameOf(ArgSpec arg) {
        return arg instanceof OptionSpec
                ? "--" + LaunchOption.of((OptionSpec) arg).optionName()
                : arg.paramLabel();
    }

    private static CommandSpec spec(Map<String, String> env) {
        // no ${...} interpolation: the prefix template's help shows ${rank} as it is written
        CommandSpec spec = CommandSpec.create().name("djlrun").interpolateVariables(false);
        for (LaunchOption o : LaunchOption.values()) {
            spec.addOption(o.spec());
        }
        spec.addPositional(
                PositionalParamSpec.builder()
                        .paramLabel("TARGET")
                        .hidden(true)
                        .arity("0..*")
                        .type(List.class)
                        .auxiliaryTypes(String.class)
                        .build());
        spec.defaultValueProvider(
                arg ->
                        arg instanceof OptionSpec
                                ? LaunchOption.of((OptionSpec) arg)
                                        .environmentVariable()
                                        .map(env::get)
                                        .filter(v -> !v.isEmpty())
                                        .orElse(null)
                                : null);
        // torchrun's convention: options first, then TARGET and the workers' own arguments; an
        // option given twice takes its last value, as argparse does (wrapper scripts append
        // their own --nproc-per-node to the user's line)
        spec.parser()
                .stopAtPositional(true)
                .toggleBooleanFlags(false)
                .overwrittenOptionsAllowed(true);
        spec.usageMessage()
                .width(WIDTH)
                .synopsisHeading("")
                .customSynopsis("usage: djlrun [options] TARGET [args...]", "")
                .description(
                        "Starts --nproc-per-node worker JVMs running TARGET's main(args) with"
                                + " torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,"
                                + " MASTER_ADDR, MASTER_PORT, ...).",
                        "TARGET: a main class, or an example: "
                                + String.join(", ", Targets.EXAMPLES.keySet()),
                        "")
                .optionListHeading(
                        "options (also --name=value, and torchrun's --name_with_underscores):%n")
                .footerHeading("%n")
                .footer(
                        "exit status: 0 when every worker succeeded; 1 when a worker failed (the"
                                + " message names its rank, exit code and time) or the nodes could"
                                + " not meet; 2 on bad usage; 128+N when the launcher was stopped"
                                + " by signal N.")
                .sectionMap()
                .put(
                        CommandLine.Model.UsageMessageSpec.SECTION_KEY_OPTION_LIST,
                        LaunchCommandLine::optionList);
        return spec;
    }

    // One row per option, as torchrun's --help shows them: "--name METAVAR  help [$VARIABLE]".
    private static String optionList(Help help) {
        TextTable table =
                TextTable.forColumns(
                        help.colorScheme(),
                        new Column(OPTION_COLUMN, 2, Column.Overflow.SPAN),
                        new Column(WIDTH - OPTION_COLUMN, 1, Column.Overflow.WRAP));
        for (OptionSpec o : help.commandSpec().options()) {
            LaunchOption option = LaunchOption.of(o);
            String left =
                    "--" + option.optionName() + (o.arity().max() == 0 ? "" : " " + o.paramLabel());
            table.addRowValues(left, String.join(" ", o.description()));
        }
        return table.toString();
    }
}
