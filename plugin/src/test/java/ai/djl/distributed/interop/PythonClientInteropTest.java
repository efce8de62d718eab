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
package ai.djl.distributed.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.tcp.TcpStore;
import ai.djl.distributed.store.tcp.TcpStoreServer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.time.Duration;
import java.util.List;

/** PyTorch 2.6's TCPStore client against the Java server, sharing keys with a Java client. */
@Timeout(180)
class PythonClientInteropTest {

    private static final String SCRIPT =
            """
            import sys, datetime, threading, time
            import torch.distributed as dist
            port = int(sys.argv[1])
            def client(**kw):
                return dist.TCPStore("127.0.0.1", port, is_master=False, use_libuv=False,
                                     timeout=datetime.timedelta(seconds=30), **kw)
            s = client()
            assert s.get("from_java") == b"hello from java", s.get("from_java")
            assert s.add("java_counter", 0) == 41
            assert s.add("java_counter", 1) == 42
            s.set("from_python", "hello from python")
            assert s.add("py_counter", 5) == 5 and s.add("py_counter", -7) == -2
            assert s.get("py_counter") == b"-2"
            assert s.compare_set("cas", "", "first") == b"first"
            assert s.compare_set("cas", "wrong", "x") == b"first"
            assert s.compare_set("cas", "first", "second") == b"second"
            assert s.compare_set("missing", "x", "y") == b"x"
            assert s.check(["from_java", "cas"]) and not s.check(["nope"])
            s.set("doomed", "1")
            assert s.delete_key("doomed") and not s.delete_key("doomed")
            s.append("potato", "po"); s.append("potato", "tato")
            assert s.get("potato") == b"potato"
            s.multi_set(["m1", "m2"], ["a", "bb"])
            assert s.multi_get(["m2", "m1"]) == [b"bb", b"a"]
            s.set("binary", bytes(range(256)))
            # values of several MiB reach the server over many reads (decoded as they arrive)
            big = bytes(range(256)) * 16384
            s.set("big", big)
            s.multi_set(["big1", "big2"], [big[::-1], big])
            assert s.get("big") == big and s.multi_get(["big1", "big2"]) == [big[::-1], big]
            assert all(s.delete_key(k) for k in ("big", "big1", "big2"))
            try:
                s.wait(["never"], datetime.timedelta(milliseconds=200))
                raise SystemExit("wait did not time out")
            except RuntimeError as e:
                assert "imeout" in str(e), e
            # the client still works after a timed-out wait
            assert s.get("from_java") == b"hello from java"
            # a WAIT released by another client's write
            def late():
                time.sleep(0.3); client().set("late", "now")
            threading.Thread(target=late).start()
            s.wait(["late"])
            # worker counting: clients with a world size and wait_for_workers add to init/
            w = [client(world_size=2) for _ in range(2)]
            print("NUMKEYS", s.num_keys())
            print("PYTHON_OK")
            """;

    @Test
    void pythonClientTalksToJavaServer() throws Exception {
        try (TcpStoreServer server = TcpStoreServer.builder().optHost("127.0.0.1").build();
                TcpStore java =
                        TcpStore.builder()
                                .setHost("127.0.0.1")
                                .setPort(server.getPort())
                                .optTimeout(Duration.ofSeconds(60))
                                .build();
                PythonPeer py = PythonPeer.start(SCRIPT, Integer.toString(server.getPort()))) {
            java.set("from_java", "hello from java");
            java.add("java_counter", 41);
            py.assertSuccess(Duration.ofSeconds(150));
            assertEquals("hello from python", java.getString("from_python"));
            assertEquals("-2", java.getString("py_counter"));
            assertEquals("second", java.getString("cas"));
            assertEquals("potato", java.getString("potato"));
            assertEquals(
                    List.of("a", "bb"),
                    java.multiGet(List.of("m1", "m2")).stream().map(String::new).toList());
            byte[] binary = java.get("binary");
            for (int i = 0; i < 256; ++i) {
                assertEquals((byte) i, binary[i]);
            }
            assertTrue(!java.check(List.of("doomed")));
            assertEquals(
                    2,
                    server.joinedWorkers(),
                    "two Python clients with world_size=2 counted on init/");
            // keys: from_java java_counter from_python py_counter cas potato m1 m2 binary late
            // init/
            assertEquals(
                    "11",
                    py.output()
                            .lines()
                            .filter(l -> l.startsWith("NUMKEYS"))
                            .findFirst()
                            .orElseThrow()
                            .split(" ")[1]);
        }
    }
}
