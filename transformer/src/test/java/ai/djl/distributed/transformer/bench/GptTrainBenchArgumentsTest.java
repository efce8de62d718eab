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
package ai.djl.distributed.transformer.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.junit.jupiter.api.Test;

import java.util.Map;

/** The benchmarks' {@code key=value} arguments: a bad one is named, before any work. */
class GptTrainBenchArgumentsTest {

    @Test
    void aBadArgumentIsNamed() {
        String[][] cases = {
            {"steps=x", "argument: steps=x (expected: steps=an integer)"},
            {"batch=", "argument: batch= (expected: batch=an integer)"},
            {"steps=0", "argument: steps=0 (expected: steps >= 1)"},
            {"warmup=-1", "argument: warmup=-1 (expected: warmup >= 0)"},
            {"heads=0", "argument: heads=0 (expected: heads >= 1)"},
            {
                "bogus=1",
                "argument: bogus=1 (expected: key=value with key in [layers, heads, width,"
                        + " context, batch, steps, warmup, vocab])"
            }
        };
        for (String[] c : cases) {
            IllegalArgumentException e =
                    assertThrows(
                            IllegalArgumentException.class,
                            () -> GptTrainBench.parse(new String[] {c[0]}, Map.of()),
                            c[0]);
            assertEquals(c[1], e.getMessage(), c[0]);
        }
    }

    @Test
    void valuesOverTheDefaults() {
        Map<String, Integer> a =
                GptTrainBench.parse(
                        new String[] {"steps=3", "warmup=0", "rounds=2"}, Map.of("rounds", 4));
        assertEquals(3, a.get("steps"));
        assertEquals(0, a.get("warmup"));
        assertEquals(2, a.get("rounds"));
        assertEquals(128, a.get("width"));
    }
}
