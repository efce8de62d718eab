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

import ai.djl.distributed.launch.Endpoint;
import ai.djl.distributed.store.FileStore;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreTimeoutException;
import ai.djl.distributed.store.tcp.StoreTls;
import ai.djl.distributed.store.tcp.TcpStore;

import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code djl-dist store}: one operation on a store, like redis-cli for a rendezvous. Keys are the
 * user's keys as a Python rank passes them; {@code get} writes the value's raw bytes to stdout. A
 * file is opened as an observer ({@link FileStore#observe}): it is not counted as one of the job's
 * workers, and only a write creates a missing file.
 */
@Command(
        name = "store",
        mixinStandardHelpOptions = true,
        description = "One operation on a store.",
        footer = {
            "OP: get KEY | set KEY VALUE | add KEY N | wait KEY... | check KEY... | delete KEY"
                    + " | num-keys",
            "exit status 3 when the operation timed out"
        })
final class StoreCommand implements Callable<Integer> {

    @Spec private CommandSpec spec;

    @ArgGroup(multiplicity = "1")
    private Where where;

    @Option(
            names = "--prefix",
            paramLabel = "P",
            description = "the keys' prefix (PrefixStore; num-keys still counts the whole store)")
    private String prefix;

    @Mixin private TlsOptions tls = new TlsOptions();

    @Option(
            names = "--timeout",
            paramLabel = "SECONDS",
            description = "longest wait of the operation; default 300")
    private double timeoutSeconds = 300;

    @Parameters(index = "0", paramLabel = "OP", description = "the operation")
    private String op;

    @Parameters(index = "1..*", paramLabel = "OPERAND", description = "its keys and values")
    private List<String> operands = new ArrayList<>();

    /** Exactly one store: a TCP server or a file. */
    static final class Where {

        @Option(
                names = "--tcp",
                paramLabel = "H:P",
                required = true,
                converter = EndpointConverter.class,
                description = "a TcpStore server")
        Endpoint tcp;

        @Option(names = "--file", paramLabel = "PATH", required = true, description = "a FileStore")
        Path file;
    }

    /**
     * Runs the operation; blocks until it ends or times out.
     *
     * @return 0 on success; 1 when {@code check} finds a key missing; 3 on a timeout
     */
    @Override
    public Integer call() {
        // whole nanoseconds; (long) saturates, so Infinity waits 292 years
        long nanos = (long) (timeoutSeconds * 1e9);
        if (!(timeoutSeconds > 0) || nanos < 1) {
            throw usage(
                    "--timeout: " + timeoutSeconds + " (expected: a positive number of seconds)");
        }
        // bad usage is told at once, not after connecting (for up to the timeout)
        checkOperands();
        String tlsOption = tls.firstGiven();
        if (where.file != null && tlsOption != null) {
            throw usage(tlsOption + ": applies to --tcp only (expected: no --tls-* with --file)");
        }
        // a TLS setting that cannot work is told before connecting, too
        StoreTls tlsSettings =
                where.file != null ? null : tls.resolve(spec.commandLine(), System.getenv());
        if (where.tcp != null) {
            EndpointConverter.checkResolves("--tcp", where.tcp.host());
        }
        Duration timeout = Duration.ofNanos(nanos);
        try (Store base = open(timeout, tlsSettings)) {
            Store store = prefix != null ? new PrefixStore(prefix, base) : base;
            store.setTimeout(timeout);
            return apply(store, op, operands);
        } catch (StoreTimeoutException e) {
            System.err.println("djl-dist store: " + e.getMessage());
            return 3;
        }
    }

    private void checkOperands() {
        switch (op) {
            case "get":
            case "delete":
                arity(op, operands, 1);
                return;
            case "set":
                arity(op, operands, 2);
                return;
            case "add":
                arity(op, operands, 2);
                parseDelta(operands.get(1));
                return;
            case "wait":
            case "check":
                atLeastOne(op, operands);
                return;
            case "num-keys":
                arity(op, operands, 0);
                return;
            default:
                throw usage(
                        "unknown store operation '"
                                + op
                                + "' (expected: get, set, add, wait, check, delete or num-keys)");
        }
    }

    private long parseDelta(String n) {
        try {
            return Long.parseLong(n);
        } catch (NumberFormatException e) {
            throw usage("add: '" + n + "' (expected: an integer)");
        }
    }

    private Store open(Duration timeout, StoreTls tlsSettings) {
        if (where.file != null) {
            // An observer: a participant would count in refcount/ and cleanup/, so an operator's
            // look at a job's file could make the job's last worker delete it early; and a read
            // of a mistyped path would create a file.
            return FileStore.observe(where.file, timeout);
        }
        TcpStore.Builder builder =
                TcpStore.builder()
                        .setHost(where.tcp.host())
                        .setPort(where.tcp.port())
                        .optTimeout(timeout)
                        .optTls(tlsSettings);
        return builder.build();
    }

    private ParameterException usage(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    private int apply(Store store, String op, List<String> operands) {
        switch (op) {
            case "get":
                arity(op, operands, 1);
                byte[] value = store.get(operands.get(0));
                try {
                    System.out.write(value);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                System.out.flush();
                return 0;
            case "set":
                arity(op, operands, 2);
                store.set(operands.get(0), operands.get(1));
                return 0;
            case "add":
                arity(op, operands, 2);
                System.out.println(store.add(operands.get(0), parseDelta(operands.get(1))));
                return 0;
            case "wait":
                atLeastOne(op, operands);
                store.waitFor(operands);
                return 0;
            case "check":
                atLeastOne(op, operands);
                boolean ready = store.check(operands);
                System.out.println(ready);
                return ready ? 0 : 1;
            case "delete":
                arity(op, operands, 1);
                System.out.println(store.deleteKey(operands.get(0)));
                return 0;
            case "num-keys":
                arity(op, operands, 0);
                System.out.println(store.numKeys());
                return 0;
            default:
                throw new AssertionError(op); // checkOperands refused it
        }
    }

    private void arity(String op, List<String> operands, int n) {
        if (operands.size() != n) {
            throw usage(op + " takes " + n + " operand(s), got " + operands);
        }
    }

    private void atLeastOne(String op, List<String> operands) {
        if (operands.isEmpty()) {
            throw usage(op + " takes at least one key");
        }
    }
}
