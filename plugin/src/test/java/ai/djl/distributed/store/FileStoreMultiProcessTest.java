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
package ai.djl.distributed.store;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import ai.djl.distributed.testing.JavaProcess;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * Four child JVMs and this one add to one counter in one file at the same time: only {@code
 * flock(2)} between processes keeps every update.
 */
class FileStoreMultiProcessTest {

    private static final int ADDS = 300;
    private static final Duration CHILD_TIMEOUT = Duration.ofSeconds(90);

    @Test
    @Timeout(180)
    void processesAddingToOneFileLoseNothing(@TempDir Path dir) throws Exception {
        Path path = dir.resolve("store");
        String file = path.toString();
        String adds = Integer.toString(ADDS);
        try (FileStore store = new FileStore(path);
                JavaProcess a = JavaProcess.start(FileStoreAddWorker.class, file, adds);
                JavaProcess b = JavaProcess.start(FileStoreAddWorker.class, file, adds);
                JavaProcess c = JavaProcess.start(FileStoreAddWorker.class, file, adds);
                JavaProcess d = JavaProcess.start(FileStoreAddWorker.class, file, adds)) {
            List<JavaProcess> children = List.of(a, b, c, d);
            awaitReady(store, children);
            store.set("go", "1");
            for (int i = 0; i < ADDS; ++i) {
                store.add("counter", 1);
            }
            for (JavaProcess child : children) {
                child.assertSuccess(CHILD_TIMEOUT);
            }
            assertEquals(5 * ADDS, store.add("counter", 0));
            assertEquals("4", store.getString("ready"));
            // Every child has closed: refcount/ and cleanup/ beside the three user keys.
            assertEquals(5, store.numKeys());
        }
    }

    /** Waits until every child has checked in, failing early with the output of one that died. */
    private static void awaitReady(FileStore store, List<JavaProcess> children)
            throws InterruptedException {
        long deadline = System.nanoTime() + CHILD_TIMEOUT.toNanos();
        while (store.add("ready", 0) < children.size()) {
            for (JavaProcess child : children) {
                if (!child.process().isAlive()) {
                    child.assertSuccess(CHILD_TIMEOUT);
                }
            }
            if (System.nanoTime() - deadline > 0) {
                fail("children did not check in within " + CHILD_TIMEOUT);
            }
            Thread.sleep(10);
        }
    }
}
