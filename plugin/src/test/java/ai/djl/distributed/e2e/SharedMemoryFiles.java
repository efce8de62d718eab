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
package ai.djl.distributed.e2e;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The project's files in {@code /dev/shm}, listed before a test and compared after it: a failure, a
 * restart or a kill must leave none behind.
 */
final class SharedMemoryFiles {

    private static final Path DIR = Path.of("/dev/shm");

    private final Set<String> before;

    private SharedMemoryFiles(Set<String> before) {
        this.before = before;
    }

    /**
     * Lists the project's files now.
     *
     * @return the snapshot
     */
    static SharedMemoryFiles snapshot() {
        return new SharedMemoryFiles(list());
    }

    /** Asserts that no file of the project's appeared since the snapshot. */
    void assertNothingNew() {
        Set<String> now = list();
        now.removeAll(before);
        assertEquals(Set.of(), now, "left in " + DIR);
    }

    private static Set<String> list() {
        if (!Files.isDirectory(DIR)) {
            return new TreeSet<>();
        }
        try (Stream<Path> files = Files.list(DIR)) {
            return files.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("djl-dist"))
                    .collect(Collectors.toCollection(TreeSet::new));
        } catch (IOException e) {
            throw new IllegalStateException("cannot list " + DIR, e);
        }
    }
}
