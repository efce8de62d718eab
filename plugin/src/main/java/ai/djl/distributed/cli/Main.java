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

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * The entry point of {@code bin/djl-dist}: picocli dispatches to a subcommand, reads its options
 * ({@code --name value} or {@code --name=value}) and writes {@code --help} for each.
 */
@Command(
        name = "djl-dist",
        mixinStandardHelpOptions = true,
        versionProvider = Main.Version.class,
        description =
                "DJL Distributed's tools: a store server, a store client, a demo, benchmarks.",
        subcommands = {
            StoreServerCommand.class,
            StoreCommand.class,
            DemoCommand.class,
            BenchCommand.class
        },
        footer = "exit status: 0 on success, 1 on failure, 2 on bad usage (3: store timeout)")
public final class Main implements Callable<Integer> {

    @Spec private CommandSpec spec;

    /**
     * Runs a subcommand and exits with its status.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        System.exit(run(Arrays.asList(args)));
    }

    /**
     * Runs a subcommand; blocks until it ends (a store server: until the JVM is stopped).
     *
     * @param args the command line
     * @return the exit status: 0 on success, 1 on failure, 2 on bad usage
     */
    public static int run(List<String> args) {
        return commandLine().execute(args.toArray(new String[0]));
    }

    /**
     * Builds the command: a failure in a subcommand prints one line, {@code djl-dist: message}, and
     * exits with 1; bad usage prints picocli's message and the usage, and exits with 2.
     *
     * @return a new command line, not shared
     */
    static CommandLine commandLine() {
        // enum values as written in the usage: --warm-up local
        CommandLine cmd = new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true);
        // Arguments are taken as typed: picocli would replace "@file" by the file's contents, so
        // "store set k @v" would store the file v (djlrun does not expand them either).
        cmd.setExpandAtFiles(false);
        cmd.setExecutionExceptionHandler(
                (e, line, parsed) -> {
                    PrintWriter err = line.getErr();
                    // an exception without a message (a bug, not a user's error) keeps its
                    // trace: "djl-dist: null" says nothing
                    if (e.getMessage() == null) {
                        err.println("djl-dist: failed");
                        e.printStackTrace(err);
                    } else {
                        err.println("djl-dist: " + e.getMessage());
                    }
                    err.flush();
                    return 1;
                });
        return cmd;
    }

    /**
     * Without a subcommand: prints the usage.
     *
     * @return 2, bad usage
     */
    @Override
    public Integer call() {
        spec.commandLine().usage(System.out);
        return 2;
    }

    /** The version {@code --version} prints: the plugin jar's. */
    static final class Version implements CommandLine.IVersionProvider {

        /** {@inheritDoc} */
        @Override
        public String[] getVersion() {
            String v = Main.class.getPackage().getImplementationVersion();
            return new String[] {"djl-dist " + (v == null ? "(development build)" : v)};
        }
    }
}
