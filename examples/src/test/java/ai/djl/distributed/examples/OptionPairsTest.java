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
package ai.djl.distributed.examples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

class OptionPairsTest {

    private static List<String> parse(String... args) {
        List<String> seen = new ArrayList<>();
        OptionPairs.parse(args, Set.of("--quiet"), (name, value) -> seen.add(name + "=" + value));
        return seen;
    }

    @Test
    void pairsFlagsAndEqualSignsAreReadInOrder() {
        assertEquals(
                List.of("--epochs=3", "--quiet=null", "--lr=0.5", "--prompt=a=b", "--seed=--7"),
                parse("--epochs", "3", "--quiet", "--lr=0.5", "--prompt=a=b", "--seed", "--7"));
        assertEquals(List.of(), parse());
    }

    @Test
    void aMissingValueAndAFlagWithOneAreRefused() {
        assertEquals(
                "--epochs: missing value (expected: --epochs VALUE)",
                assertThrows(IllegalArgumentException.class, () -> parse("--quiet", "--epochs"))
                        .getMessage());
        assertEquals(
                "--quiet: takes no value (got 'yes')",
                assertThrows(IllegalArgumentException.class, () -> parse("--quiet=yes"))
                        .getMessage());
    }
}
