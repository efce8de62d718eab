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

import java.nio.file.Path;
import java.time.Duration;

/**
 * A child JVM of {@link FileStoreMultiProcessTest}: opens the store, checks in on {@code ready},
 * waits for {@code go} so that every process adds at the same time, then adds 1 to {@code counter}
 * as many times as asked. Any failure exits the JVM with a non-zero status and a stack trace.
 */
public final class FileStoreAddWorker {

    private FileStoreAddWorker() {}

    /**
     * Runs the worker.
     *
     * @param args the store's file and the number of additions
     */
    public static void main(String[] args) {
        int adds = Integer.parseInt(args[1]);
        try (FileStore store = new FileStore(Path.of(args[0]))) {
            store.setTimeout(Duration.ofSeconds(60));
            store.add("ready", 1);
            store.get("go");
            for (int i = 0; i < adds; ++i) {
                store.add("counter", 1);
            }
        }
    }
}
