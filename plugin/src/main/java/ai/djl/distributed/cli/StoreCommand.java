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

import ai.djl.distributed.store.FileStore;
import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.Store;
import ai.djl.distributed.store.StoreTimeoutException;
import ai.djl.distributed.store.tcp.TcpStore;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * {@code djl-dist store}: one operation on a store, like redis-cli for a rendezvous. Keys are the
 * user's keys as a Python rank passes them; {@code get} writes the value's raw bytes to stdout.
 */
final class StoreCommand {

    private StoreCommand() {}

    static int run(List<String> argv) {
        Args args = new Args(argv, Set.of("tcp", "file", "prefix", "timeout"));
        List<String> words = args.positional();
        if (words.isEmpty()) {
            throw new Args.UsageException("store needs an operation");
        }
        Duration timeout = Duration.ofMillis((long) (args.getDouble("timeout", 300) * 1000));
        try (Store base = open(args, timeout)) {
            Store store = args.has("prefix") ? new PrefixStore(args.get("prefix", ""), base) : base;
            store.setTimeout(timeout);
            return apply(store, words.get(0), words.subList(1, words.size()));
        } catch (StoreTimeoutException e) {
            System.err.println("djl-dist store: " + e.getMessage());
            return 3;
        }
    }

    private static Store open(Args args, Duration timeout) {
        if (args.has("tcp") == args.has("file")) {
            throw new Args.UsageException("store needs exactly one of --tcp H:P and --file PATH");
        }
        if (args.has("file")) {
            return new FileStore(Path.of(args.get("file", "")));
        }
        String endpoint = args.get("tcp", "");
        int colon = endpoint.lastIndexOf(':');
        if (colon <= 0) {
            throw new Args.UsageException("--tcp: '" + endpoint + "' (expected: HOST:PORT)");
        }
        int port;
        try {
            port = Integer.parseInt(endpoint.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new Args.UsageException("--tcp: '" + endpoint + "' (expected: HOST:PORT)");
        }
        String host = endpoint.substring(0, colon).replace("[", "").replace("]", "");
        return TcpStore.builder().setHost(host).setPort(port).optTimeout(timeout).build();
    }

    private static int apply(Store store, String op, List<String> operands) {
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
                long delta;
                try {
                    delta = Long.parseLong(operands.get(1));
                } catch (NumberFormatException e) {
                    throw new Args.UsageException(
                            "add: '" + operands.get(1) + "' (expected: an integer)");
                }
                System.out.println(store.add(operands.get(0), delta));
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
                throw new Args.UsageException("unknown store operation '" + op + "'");
        }
    }

    private static void arity(String op, List<String> operands, int n) {
        if (operands.size() != n) {
            throw new Args.UsageException(op + " takes " + n + " operand(s), got " + operands);
        }
    }

    private static void atLeastOne(String op, List<String> operands) {
        if (operands.isEmpty()) {
            throw new Args.UsageException(op + " takes at least one key");
        }
    }
}
