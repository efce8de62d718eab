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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Each GPT training option out of its range is refused alone, by its name and its value. */
class GptTrainOptionsRangesTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "--steps|-1|--steps: -1 (expected: >= 0)",
                "--warmup|-2|--warmup: -2 (expected: >= 0)",
                "--sample-tokens|-3|--sample-tokens: -3 (expected: >= 0)",
                "--top-k|-4|--top-k: -4 (expected: >= 0)",
                "--weight-decay|-0.5|--weight-decay: -0.5 (expected: finite, >= 0)",
                "--weight-decay|NaN|--weight-decay: NaN (expected: finite, >= 0)",
                "--weight-decay|Infinity|--weight-decay: Infinity (expected: finite, >= 0)",
                "--lr|Infinity|--lr: Infinity (expected: finite, > 0)",
                "--lr|NaN|--lr: NaN (expected: finite, > 0)",
                "--lr|0|--lr: 0.0 (expected: finite, > 0)",
                "--minutes|Infinity|--minutes: Infinity (expected: finite, > 0)",
                "--minutes|-1|--minutes: -1.0 (expected: finite, > 0)",
                "--batch|0|--batch: 0 (expected: > 0)",
                "--eval-every|-1|--eval-every: -1 (expected: > 0)"
            })
    void anOptionOutOfRangeIsNamedWithItsValue(String option, String value, String expected) {
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> GptTrainOptions.parse(option, value));
        assertEquals(expected, e.getMessage());
    }

    @Test
    void theBoundariesAreAccepted() {
        GptTrainOptions o =
                GptTrainOptions.parse(
                        "--steps",
                        "0",
                        "--warmup",
                        "0",
                        "--sample-tokens",
                        "0",
                        "--top-k",
                        "0",
                        "--weight-decay",
                        "0",
                        "--lr",
                        "1e-9",
                        "--minutes",
                        "1e-3");
        assertEquals(0f, o.weightDecay);
        assertEquals(1e-9f, o.lr);
    }
}
