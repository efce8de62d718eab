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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The size check of {@link FileStoreLog#encode}, on lengths alone: the values that make the sum of
 * a record's fields overflow an int would take 2 GiB of heap each.
 */
class FileStoreLogTest {

    @Test
    void sizesARecordAsItsFourFields() {
        assertEquals(11, FileStoreLog.recordSize(2, 1)); // u32, "/k", u32, "v"
        assertEquals(8, FileStoreLog.recordSize(0, 0));
        assertArrayEquals(FileStoreTest.records("/k", "v"), FileStoreLog.encode("/k", b("v")));
        // the largest record: one array of Stores.MAX_VALUE_BYTES = 2^31 - 1 - 64
        assertEquals(2_147_483_583, FileStoreLog.recordSize(2, 2_147_483_573));
    }

    @Test
    void refusesARecordPastTheLargestArray() {
        // 8 + 9 + 2147483639 = 2147483656: wraps to -2147483640 in an int
        StoreException wraps =
                assertThrows(StoreException.class, () -> FileStoreLog.recordSize(9, 2_147_483_639));
        for (String size : new String[] {"9-byte key", "2147483639-byte value", "2147483656"}) {
            assertTrue(wraps.getMessage().contains(size), wraps.getMessage() + " lacks " + size);
        }
        // both lengths near the top: wraps to a small positive int in an int
        assertThrows(
                StoreException.class,
                () -> FileStoreLog.recordSize(Integer.MAX_VALUE, Integer.MAX_VALUE));
        // no overflow, one byte past the largest array
        assertThrows(StoreException.class, () -> FileStoreLog.recordSize(2, 2_147_483_574));
    }

    private static byte[] b(String s) {
        return s.getBytes(java.nio.charset.StandardCharsets.UTF_8);
    }
}
