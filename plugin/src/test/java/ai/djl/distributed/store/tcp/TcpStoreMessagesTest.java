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
package ai.djl.distributed.store.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.PrefixStore;
import ai.djl.distributed.store.StoreException;
import ai.djl.distributed.store.StoreTimeoutException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

import java.io.DataInputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Timeout and failure messages name the keys as the user passed them, never as they go on the wire
 * ({@code "/" + key}); through a {@link PrefixStore}, as that store's caller passed them.
 */
@Timeout(60)
class TcpStoreMessagesTest {

    private static final Duration SHORT = Duration.ofMillis(300);
    // a key whose UTF-8 bytes differ from its chars: the message must show the chars
    private static final String UNICODE = "clé/ключ";

    private static TcpStore server() {
        return TcpStore.builder()
                .setHost("127.0.0.1")
                .setPort(0)
                .optServer(true)
                .optTimeout(SHORT)
                .build();
    }

    private static void assertNamesUserKeys(StoreException e, List<String> keys) {
        String message = e.getMessage();
        assertTrue(message.contains(keys.toString()), message);
        for (String key : keys) {
            assertFalse(message.contains("/" + key), message);
        }
    }

    @Test
    void timeoutsOfEveryBlockingCallNameTheUsersKeys() {
        try (TcpStore store = server()) {
            Map<List<String>, Executable> calls = new LinkedHashMap<>();
            calls.put(List.of("never"), () -> store.get("never"));
            calls.put(List.of("w1", "w2"), () -> store.waitFor(List.of("w1", "w2"), SHORT));
            calls.put(List.of("m1", "m2"), () -> store.multiGet(List.of("m1", "m2")));
            calls.put(List.of("q"), () -> store.queuePop("q"));
            calls.put(List.of(UNICODE), () -> store.get(UNICODE));
            for (Map.Entry<List<String>, Executable> call : calls.entrySet()) {
                StoreTimeoutException e =
                        assertThrows(StoreTimeoutException.class, call.getValue());
                assertNamesUserKeys(e, call.getKey());
                assertEquals(call.getKey(), e.getKeys());
            }
        }
    }

    @Test
    void failuresOfEveryCallNameTheOperationAndTheUsersKeys() {
        TcpStore owner = server();
        try (TcpStore client =
                TcpStore.builder()
                        .setHost("127.0.0.1")
                        .setPort(owner.getPort())
                        .optTimeout(Duration.ofSeconds(20))
                        .build()) {
            owner.close(); // the server goes away
            // the first call learns it (the connection closes under its pending WAIT)
            assertNamesUserKeys(
                    assertThrows(StoreException.class, () -> client.get("first")),
                    List.of("first"));
            Map<String, Executable> calls = new LinkedHashMap<>();
            calls.put("WAIT [g]", () -> client.get("g")); // a get waits first, as PyTorch's
            calls.put("QUEUE_POP [t]", () -> client.queueTryPop("t"));
            calls.put("ADD [a]", () -> client.add("a", 1));
            calls.put("SET [s]", () -> client.set("s", "v"));
            calls.put(
                    "COMPARE_SET [" + UNICODE + "]",
                    () -> client.compareSet(UNICODE, new byte[0], new byte[1]));
            calls.put("DELETE_KEY [d]", () -> client.deleteKey("d"));
            calls.put("CHECK [c1, c2]", () -> client.check(List.of("c1", "c2")));
            calls.put("WAIT [w]", () -> client.waitFor(List.of("w"), SHORT));
            calls.put("WAIT [m1, m2]", () -> client.multiGet(List.of("m1", "m2")));
            calls.put("MULTI_SET [m1]", () -> client.multiSet(List.of("m1"), List.of(new byte[1])));
            calls.put("APPEND [p]", () -> client.append("p", new byte[1]));
            calls.put("QUEUE_PUSH [q]", () -> client.queuePush("q", new byte[1]));
            calls.put("QUEUE_LEN [q]", () -> client.queueLength("q"));
            for (Map.Entry<String, Executable> call : calls.entrySet()) {
                StoreException e = assertThrows(StoreException.class, call.getValue());
                assertTrue(e.getMessage().startsWith(call.getKey() + ": "), e.getMessage());
                assertTrue(e.getMessage().contains("closed"), e.getMessage());
            }
        } finally {
            owner.close();
        }
    }

    @Test
    void aMissingReplyNamesTheUsersKey() throws Exception {
        // a server that completes the handshake, then never answers
        try (ServerSocket listener = new ServerSocket(0)) {
            listener.setSoTimeout(60_000); // accept() ignores @Timeout's interrupt
            CompletableFuture<TcpStore> connecting =
                    CompletableFuture.supplyAsync(
                            () ->
                                    TcpStore.builder()
                                            .setHost("127.0.0.1")
                                            .setPort(listener.getLocalPort())
                                            .optTimeout(Duration.ofSeconds(20))
                                            .build());
            try (Socket s = listener.accept()) {
                s.setSoTimeout(10_000);
                DataInputStream in = new DataInputStream(s.getInputStream());
                OutputStream out = s.getOutputStream();
                in.readFully(new byte[5]); // VALIDATE
                in.readFully(new byte[1]); // PING
                byte[] nonce = new byte[4];
                in.readFully(nonce);
                out.write(nonce);
                out.flush();
                try (TcpStore store = connecting.get(60, TimeUnit.SECONDS)) {
                    store.setTimeout(SHORT);
                    StoreException e =
                            assertThrows(StoreException.class, () -> store.add(UNICODE, 1));
                    assertTrue(
                            e.getMessage().startsWith("no reply to ADD [" + UNICODE + "]"),
                            e.getMessage());
                }
            }
        }
    }

    @Test
    void aPrefixStoreNamesItsCallersKeysAndKeepsTheJoinedOnesInTheCause() {
        try (TcpStore store = server()) {
            PrefixStore inner = new PrefixStore("b", store);
            PrefixStore outer = new PrefixStore("a", inner);
            StoreTimeoutException e =
                    assertThrows(StoreTimeoutException.class, () -> outer.get("k"));
            assertEquals(List.of("k"), e.getKeys());
            assertTrue(
                    e.getMessage().contains("[k] in PrefixStore(a, PrefixStore(b, Tcp"),
                    e.getMessage());
            StoreTimeoutException fromInner =
                    assertInstanceOf(StoreTimeoutException.class, e.getCause());
            assertEquals(List.of("a/k"), fromInner.getKeys());
            StoreTimeoutException fromTcp =
                    assertInstanceOf(StoreTimeoutException.class, fromInner.getCause());
            assertEquals(List.of("b/a/k"), fromTcp.getKeys());
            assertTrue(fromTcp.getMessage().contains("[b/a/k] in TcpStore("), fromTcp.getMessage());
            assertEquals(SHORT, e.getTimeout());
            Map<List<String>, Executable> calls = new LinkedHashMap<>();
            calls.put(List.of("k", "j"), () -> outer.waitFor(List.of("k", "j"), SHORT));
            calls.put(List.of("x", "y"), () -> outer.multiGet(List.of("x", "y")));
            calls.put(List.of("q"), () -> outer.queuePop("q"));
            for (Map.Entry<List<String>, Executable> call : calls.entrySet()) {
                StoreTimeoutException t =
                        assertThrows(StoreTimeoutException.class, call.getValue());
                assertEquals(call.getKey(), t.getKeys());
                assertTrue(
                        t.getMessage().contains(call.getKey() + " in PrefixStore(a,"),
                        t.getMessage());
            }
        }
    }
}
