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
package ai.djl.distributed.launch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/** When djlrun adds its glibc malloc settings, and what they are. */
class MallocSettingsTest {

    private final ByteArrayOutputStream note = new ByteArrayOutputStream();
    private final PrintStream err = new PrintStream(note, true, StandardCharsets.UTF_8);

    @Test
    void linuxWorkersGetOneArenaNoMmapBelow32MibAndNoTrimmingBelowOneGib() {
        Map<String, String> added = MallocSettings.forWorkers(Map.of("PATH", "/bin"), "Linux", err);
        assertEquals(
                Map.of(
                        "MALLOC_ARENA_MAX", "1",
                        "MALLOC_MMAP_THRESHOLD_", "33554432",
                        "MALLOC_TRIM_THRESHOLD_", "1073741824"),
                added);
        String printed = note.toString(StandardCharsets.UTF_8);
        assertTrue(
                printed.contains(
                        "setting MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=33554432"
                                + " MALLOC_TRIM_THRESHOLD_=1073741824 for each worker"),
                printed);
        assertTrue(printed.contains("GLIBC_TUNABLES"), printed);
    }

    @Test
    void anyChoiceOfTheUsersWinsWhole() {
        for (String name :
                new String[] {"GLIBC_TUNABLES", "MALLOC_ARENA_MAX", "MALLOC_TOP_PAD_", "MALLOC_"}) {
            assertEquals(Map.of(), MallocSettings.forWorkers(Map.of(name, ""), "Linux", err), name);
        }
        assertEquals("", note.toString(StandardCharsets.UTF_8));
    }

    @Test
    void otherSystemsGetNothing() {
        assertEquals(Map.of(), MallocSettings.forWorkers(Map.of(), "Mac OS X", err));
        assertEquals(Map.of(), MallocSettings.forWorkers(Map.of(), "Windows 11", err));
    }
}
