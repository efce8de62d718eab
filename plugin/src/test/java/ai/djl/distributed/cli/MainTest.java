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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.Callable;
import java.util.function.Supplier;

/** How djl-dist reports a subcommand's failure. */
class MainTest {

    /** A subcommand failing with {@code failure}. */
    @Command(name = "fail")
    static final class Failing implements Callable<Integer> {

        private final Supplier<RuntimeException> failure;

        Failing(Supplier<RuntimeException> failure) {
            this.failure = failure;
        }

        @Override
        public Integer call() {
            throw failure.get();
        }
    }

    private static String[] run(Supplier<RuntimeException> failure) {
        CommandLine cmd = Main.commandLine();
        cmd.addSubcommand(new Failing(failure));
        StringWriter err = new StringWriter();
        cmd.setErr(new PrintWriter(err));
        int status = cmd.execute("fail");
        return new String[] {String.valueOf(status), err.toString()};
    }

    @Test
    void aFailureWithAMessagePrintsOneLineAndExitsOne() {
        String[] r = run(() -> new IllegalStateException("store at h:1 is gone"));
        assertEquals("1", r[0]);
        assertEquals("djl-dist: store at h:1 is gone", r[1].strip());
    }

    @Test
    void aFailureWithoutAMessageKeepsItsStackTrace() {
        // "djl-dist: null" told nothing: a messageless exception is a bug, and its trace says where
        String[] r = run(NullPointerException::new);
        assertEquals("1", r[0]);
        assertTrue(
                r[1].startsWith("djl-dist: failed")
                        && r[1].contains("java.lang.NullPointerException")
                        && r[1].contains("MainTest"),
                r[1]);
    }
}
