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
package ai.djl.distributed.backend.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NcclVersionTest {

    @Test
    void codesOfBothSchemesAreRead() {
        assertEquals(new NcclVersion(2, 18, 3), NcclVersion.fromCode(21803));
        assertEquals(new NcclVersion(2, 28, 9), NcclVersion.fromCode(22809));
        assertEquals(new NcclVersion(2, 7, 8), NcclVersion.fromCode(2708));
        assertEquals(new NcclVersion(2, 10, 3), NcclVersion.fromCode(21003));
        assertEquals("2.18.3", NcclVersion.fromCode(21803).toString());
        assertEquals("2.7.8", NcclVersion.fromCode(2708).toString());
    }

    @Test
    void codesAreMadeAsTheMacroMakesThem() {
        // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z up to 2.8, X*10000+Y*100+Z after.
        assertEquals(2804, NcclVersion.code(2, 8, 4));
        assertEquals(21800, NcclVersion.code(2, 18, 0));
        assertEquals(30001, NcclVersion.code(3, 0, 1));
        for (int code : new int[] {2804, 21800, 22809, 30001}) {
            NcclVersion v = NcclVersion.fromCode(code);
            assertEquals(code, NcclVersion.code(v.major(), v.minor(), v.patch()));
        }
    }

    @Test
    void theFloorIs218() {
        assertEquals("2.18.0", NcclVersion.FLOOR.toString());
        assertFalse(NcclVersion.fromCode(21703).atLeast(NcclVersion.FLOOR));
        assertFalse(NcclVersion.fromCode(2708).atLeast(NcclVersion.FLOOR));
        assertTrue(NcclVersion.fromCode(21800).atLeast(NcclVersion.FLOOR));
        assertTrue(NcclVersion.fromCode(22809).atLeast(NcclVersion.FLOOR));
        assertTrue(new NcclVersion(3, 0, 0).atLeast(NcclVersion.FLOOR));
    }

    @Test
    void badCodesAreRefused() {
        IllegalArgumentException e =
                assertThrows(IllegalArgumentException.class, () -> NcclVersion.fromCode(0));
        assertTrue(e.getMessage().contains("0"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> NcclVersion.fromCode(-5));
    }
}
