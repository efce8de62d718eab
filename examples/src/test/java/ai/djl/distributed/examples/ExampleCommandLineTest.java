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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** The examples' command-line reading, as OptionPairsTest checked it before picocli. */
class ExampleCommandLineTest {

    /**
     * An example's {@code main} given bad usage prints one line naming the option and exits with
     * status 2, as bin/djlrun and bin/djl-dist do: no stack trace (a user's typo is not a crash).
     */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "DdpBasics|--batch|0|ddp_basics: --batch: 0 (expected: > 0)",
                "TransformerBasics|--steps|x|transformer_basics: --steps: x (expected: an integer)",
                "FsdpBasics|--strategy|foo|fsdp_basics: --strategy: foo (expected: FULL_SHARD,"
                        + " SHARD_GRAD_OP, NO_SHARD or HYBRID_SHARD)"
            })
    void badUsageOfAnExampleExitsWithStatusTwoAndOneLine(
            String example, String option, String value, String expected)
            throws IOException, InterruptedException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p =
                new ProcessBuilder(
                                java,
                                "-cp",
                                System.getProperty("java.class.path"),
                                ExampleCommandLineTest.class.getPackageName() + "." + example,
                                option,
                                value)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start();
        try {
            assertTrue(p.waitFor(60, TimeUnit.SECONDS), example + " did not exit in 60 s");
            String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
            assertEquals(expected, err.strip(), example + "'s standard error");
            assertEquals(2, p.exitValue(), example + "'s exit status");
        } finally {
            p.destroyForcibly();
        }
    }

    /** Records each option as picocli hands it over, in order. */
    static final class Seen {

        final List<String> seen = new ArrayList<>();

        @Option(names = "--epochs")
        void epochs(String v) {
            seen.add("--epochs=" + v);
        }

        @Option(names = "--quiet")
        void quiet(boolean v) {
            seen.add("--quiet=null");
        }

        @Option(names = "--lr")
        void lr(String v) {
            seen.add("--lr=" + v);
        }

        @Option(names = "--prompt")
        void prompt(String v) {
            seen.add("--prompt=" + v);
        }

        @Option(names = "--seed")
        void seed(String v) {
            seen.add("--seed=" + v);
        }
    }

    private static List<String> parse(String... args) {
        return ExampleCommandLine.parse(new Seen(), "usage: test [options]", args).seen;
    }

    @Test
    void pairsFlagsAndEqualSignsAreReadInOrder() {
        assertEquals(
                List.of("--epochs=3", "--quiet=null", "--lr=0.5", "--prompt=a=b", "--seed=--7"),
                parse("--epochs", "3", "--quiet", "--lr=0.5", "--prompt=a=b", "--seed", "--7"));
        assertEquals(List.of(), parse());
    }

    @Test
    void aMissingValueAndAFlagWithOneAreRefused() {
        assertEquals(
                "--epochs: missing value (expected: --epochs VALUE)",
                assertThrows(IllegalArgumentException.class, () -> parse("--quiet", "--epochs"))
                        .getMessage());
        assertEquals(
                "--quiet: takes no value (got 'yes')",
                assertThrows(IllegalArgumentException.class, () -> parse("--quiet=yes"))
                        .getMessage());
    }

    @Test
    void anUnknownOptionIsNamedAboveTheGeneratedUsage() {
        String m =
                assertThrows(IllegalArgumentException.class, () -> parse("--bogus", "1"))
                        .getMessage();
        assertTrue(m.startsWith("unknown option: --bogus\nusage: test [options]\n"), m);
        assertTrue(m.contains("--epochs"), m);
    }

    /** An example that reuses the GPT options, as fsdp_basics will, and adds one of its own. */
    static final class WithStrategy {

        @Mixin GptTrainOptions gpt = new GptTrainOptions();

        @Option(names = "--strategy")
        String strategy = "full";
    }

    @Test
    void theGptOptionsMixIntoAnotherExample() {
        WithStrategy o =
                ExampleCommandLine.parse(
                        new WithStrategy(),
                        "usage: test [options]",
                        "--batch=8",
                        "--strategy",
                        "shard",
                        "--preset",
                        "TINY");
        o.gpt.check();
        assertEquals(8, o.gpt.batch);
        assertEquals("tiny", o.gpt.preset); // check() lower-cases it
        assertEquals("shard", o.strategy);
        assertEquals(2e-3f, o.gpt.lr); // the GPT defaults stay
        String usage = ExampleCommandLine.usage(new WithStrategy(), "usage: test [options]");
        assertTrue(usage.contains("--strategy") && usage.contains("--final-eval-batches"), usage);
        assertEquals(
                "--batch: x (expected: an integer)",
                assertThrows(
                                IllegalArgumentException.class,
                                () ->
                                        ExampleCommandLine.parse(
                                                new WithStrategy(), "usage: test", "--batch", "x"))
                        .getMessage());
    }

    /** A value that starts with '@' is the value, not the name of a file to read it from. */
    @Test
    void aValueStartingWithAtIsTakenAsTyped(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("p");
        Files.writeString(file, "--steps 5\n");
        String typed = "@" + file;
        GptTrainOptions o = GptTrainOptions.parse("--prompt", typed);
        assertEquals(typed, o.prompt);
        assertEquals(List.of("--prompt=" + typed), parse("--prompt", typed));
        // an @file standing alone is an argument too, not the file's options
        String m = assertThrows(IllegalArgumentException.class, () -> parse(typed)).getMessage();
        assertTrue(m.startsWith("unknown option: " + typed + "\n"), m);
    }

    /** A number option's refusal says whether an integer or a decimal number was expected. */
    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "--batch|2.5|an integer",
                "--steps|1e3|an integer",
                "--seed|99999999999|an integer from -2147483648 to 2147483647",
                "--seed|-2147483649|an integer from -2147483648 to 2147483647",
                "--lr|fast|a decimal number, e.g. 0.5 or 1e-3",
                "--minutes|1,5|a decimal number, e.g. 0.5 or 1e-3"
            })
    void aBadNumberNamesTheKindOfNumberExpected(String option, String value, String expected) {
        assertEquals(
                option + ": " + value + " (expected: " + expected + ")",
                assertThrows(
                                IllegalArgumentException.class,
                                () -> GptTrainOptions.parse(option, value))
                        .getMessage());
    }

    /** A repeated option takes its last value, as bin/djlrun's options do. */
    @Test
    void aRepeatedOptionTakesItsLastValue() {
        GptTrainOptions o = GptTrainOptions.parse("--batch", "8", "--batch=9", "--seed", "1");
        assertEquals(9, o.batch);
        assertEquals(1, o.seed);
        assertEquals(List.of("--epochs=1", "--epochs=2"), parse("--epochs", "1", "--epochs", "2"));
    }
}
