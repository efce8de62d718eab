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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.store.FileStore;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** One FileStore file written and read by Java and by PyTorch 2.6, at the same time too. */
@Timeout(180)
class FileStoreInteropTest {

    private Path dir;
    private Path file;

    @BeforeEach
    void makeDir() throws Exception {
        dir = Files.createTempDirectory(Path.of("/tmp"), "djl-filestore-interop-");
        file = dir.resolve("store");
    }

    @AfterEach
    void removeDir() throws Exception {
        Files.deleteIfExists(file);
        Files.deleteIfExists(dir);
    }

    @Test
    void javaAndPythonReadEachOthersRecords() throws Exception {
        String script =
                """
                import sys, datetime
                import torch.distributed as dist
                s = dist.FileStore(sys.argv[1], -1)
                s.set_timeout(datetime.timedelta(seconds=30))
                assert s.get("j") == b"java", s.get("j")
                assert s.add("n", 2) == 7
                assert not s.check(["gone"]) and s.check(["j", "-dash"])
                assert s.get("-dash") == b"not a tombstone"
                s.set("p", "python")
                assert s.compare_set("p", "python", "python2") == b"python2"
                s.delete_key("j")
                print("NUMKEYS", s.num_keys())
                print("OK")
                """;
        try (FileStore java = new FileStore(file)) {
            java.set("j", "java");
            java.add("n", 5);
            java.set("gone", "soon");
            java.deleteKey("gone");
            java.set("-dash", "not a tombstone");
            try (PythonPeer py = PythonPeer.start(script, file.toString())) {
                String out = py.assertSuccess(Duration.ofSeconds(120));
                // n, -dash, p and refcount/ remain (j and gone deleted)
                assertTrue(out.contains("NUMKEYS 4"), out);
            }
            assertEquals("python2", java.getString("p"));
            assertEquals(7, java.add("n", 0));
            assertFalse(java.check(List.of("j")));
            // Python's store has closed since, adding PyTorch's cleanup/ counter
            assertEquals(5, java.numKeys());
        }
    }

    @Test
    void concurrentAddsFromBothLanguagesLoseNothing() throws Exception {
        String script =
                """
                import sys, datetime
                import torch.distributed as dist
                s = dist.FileStore(sys.argv[1], -1)
                s.set_timeout(datetime.timedelta(seconds=60))
                s.set("py_ready", "1")
                s.wait(["java_ready"])
                for _ in range(1000):
                    s.add("counter", 1)
                print("OK")
                """;
        try (FileStore java = new FileStore(file);
                PythonPeer py = PythonPeer.start(script, file.toString())) {
            java.setTimeout(Duration.ofSeconds(60));
            java.waitFor(List.of("py_ready"));
            java.set("java_ready", "1");
            for (int i = 0; i < 1000; ++i) {
                java.add("counter", 1);
            }
            py.assertSuccess(Duration.ofSeconds(120));
            assertEquals(2000, java.add("counter", 0));
        }
    }

    @Test
    void lastOfBothLanguagesRemovesTheFile() throws Exception {
        String script =
                """
                import sys
                import torch.distributed as dist
                s = dist.FileStore(sys.argv[1], 2)
                s.set("py", "1")
                del s
                print("OK")
                """;
        FileStore java = new FileStore(file, 2);
        try (PythonPeer py = PythonPeer.start(script, file.toString())) {
            py.assertSuccess(Duration.ofSeconds(120));
        }
        assertTrue(Files.exists(file), "the file must outlive the first of two workers");
        assertEquals("1", java.getString("py"));
        java.close();
        assertFalse(Files.exists(file), "the last worker removes the file");
    }
}
