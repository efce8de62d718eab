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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code djl-dist store-server --world-size N} counts the joined workers from {@code init/}, a key
 * any client may write: a value there that is no counter must not take the server down.
 */
@Timeout(120)
class StoreServerWorldSizeTest {

    private static final Pattern LISTENING = Pattern.compile("listening on 127\\.0\\.0\\.1:(\\d+)");

    @Test
    void aRawSetOfInitThatIsNoCounterLeavesTheServerServing() throws Exception {
        // no secret and no TLS from the build's environment: the raw requests below are plain
        try (JavaProcess server =
                JavaProcess.startIsolated(
                        Main.class,
                        Map.of(),
                        "store-server",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        "0",
                        "--world-size",
                        "2",
                        "--warm-up-ms",
                        "0")) {
            int port = Integer.parseInt(await(server, LISTENING).group(1));
            try (Socket socket = new Socket("127.0.0.1", port)) {
                socket.setSoTimeout(10_000);
                OutputStream out = socket.getOutputStream();
                DataInputStream in = new DataInputStream(socket.getInputStream());
                // VALIDATE with the magic number, then SET init/ to 100 digits: past any counter
                byte[] request =
                        cat(new byte[] {0}, u32(0x3C85F7CE), set("init/", "9".repeat(100)));
                out.write(request);
                out.flush();
                // the server's main thread polls init/ every 10 ms: its WARN says it saw the value
                await(server, Pattern.compile("cannot count the joined workers"));
                assertTrue(server.process().isAlive(), "the server exited:\n" + server.output());
                out.write(set("/k", "v"));
                out.write(get("/k"));
                out.flush();
                assertArrayEquals(cat(u64(1), new byte[] {'v'}), readBytes(in, 9), server.output());
                String warn = server.output();
                assertEquals(1, count(warn, "cannot count the joined workers"), warn);
                assertTrue(warn.contains("init/"), warn);
                // a counter back in init/: the wait goes on and sees both workers
                out.write(set("init/", "2"));
                out.flush();
                await(server, Pattern.compile("all 2 workers joined"));
                out.write(get("/k"));
                out.flush();
                assertArrayEquals(cat(u64(1), new byte[] {'v'}), readBytes(in, 9), server.output());
            }
            assertTrue(server.process().isAlive(), server.output());
        }
    }

    private static Matcher await(JavaProcess p, Pattern pattern) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            Matcher m = pattern.matcher(p.output());
            if (m.find()) {
                return m;
            }
            assertTrue(p.process().isAlive(), "exited before " + pattern + ":\n" + p.output());
            assertFalse(System.nanoTime() - deadline > 0, "no " + pattern + ":\n" + p.output());
            Thread.sleep(20);
        }
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            ++n;
        }
        return n;
    }

    private static byte[] readBytes(DataInputStream in, int n) throws IOException {
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    /** SET (opcode 1): the key and the value, each a u64 length and its bytes. */
    private static byte[] set(String key, String value) {
        return cat(new byte[] {1}, str(key), str(value));
    }

    /** GET (opcode 3): the key; the reply is the value, a u64 length and its bytes. */
    private static byte[] get(String key) {
        return cat(new byte[] {3}, str(key));
    }

    private static byte[] str(String s) {
        byte[] b = s.getBytes(StandardCharsets.US_ASCII);
        return cat(u64(b.length), b);
    }

    private static byte[] u64(long v) {
        return ByteBuffer.allocate(8).order(ByteOrder.LITTLE_ENDIAN).putLong(v).array();
    }

    private static byte[] u32(int v) {
        return ByteBuffer.allocate(4).order(ByteOrder.LITTLE_ENDIAN).putInt(v).array();
    }

    private static byte[] cat(byte[]... parts) {
        ByteBuffer all = ByteBuffer.allocate(List.of(parts).stream().mapToInt(p -> p.length).sum());
        for (byte[] p : parts) {
            all.put(p);
        }
        return all.array();
    }
}
