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

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** The store contract on a {@link FileStore} seen through a {@link PrefixStore}. */
class PrefixFileStoreTest extends StoreContractTest {

    private Path dir;
    private Path path;
    // A PrefixStore does not close the store it wraps, so the test closes them.
    private final List<FileStore> files = new ArrayList<>();

    /** {@inheritDoc} */
    @Override
    protected Store createStore() throws IOException {
        dir = Files.createTempDirectory("djl-prefix-file-store-");
        path = dir.resolve("store");
        return new PrefixStore("pre", openFileStore());
    }

    /** {@inheritDoc} */
    @Override
    protected Store connectAgain(Store store) {
        return new PrefixStore("pre", openFileStore());
    }

    /** {@inheritDoc} */
    @Override
    protected long internalKeys() {
        return 1;
    }

    /** {@inheritDoc} */
    @Override
    protected void cleanUp() throws IOException {
        for (FileStore file : files) {
            file.close();
        }
        FileStoreTest.deleteTree(dir);
    }

    private FileStore openFileStore() {
        FileStore file = new FileStore(path);
        files.add(file);
        return file;
    }

    @Test
    void keysAreJoinedInTheFileAsPyTorchJoinsThem() throws IOException {
        store.set("k", "v");
        store.deleteKey("k");
        byte[] tail = FileStoreTest.records("/pre/k", "v", "-/pre/k", "");
        byte[] all = Files.readAllBytes(path);
        assertArrayEquals(tail, Arrays.copyOfRange(all, all.length - tail.length, all.length));
        assertEquals(1, store.numKeys());
    }
}
