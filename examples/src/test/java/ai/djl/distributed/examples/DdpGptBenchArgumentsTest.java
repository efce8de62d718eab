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

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * DdpGptBench checks its arguments before it sets up the process group: {@code rounds=0} was an
 * ArithmeticException in every rank after the rendezvous.
 */
@Timeout(60)
class DdpGptBenchArgumentsTest {

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "rounds=0|argument: rounds=0 (expected: rounds >= 1)",
                "steps=0|argument: steps=0 (expected: steps >= 1)",
                "bucket_kib=0|argument: bucket_kib=0 (expected: bucket_kib >= 1)"
            })
    void aBadArgumentFailsBeforeTheProcessGroup(String arg, String expected) {
        // main itself: nothing set up yet (no RANK or MASTER_ADDR here), only the arguments read
        IllegalArgumentException e =
                assertThrows(
                        IllegalArgumentException.class, () -> DdpGptBench.main(new String[] {arg}));
        assertEquals(expected, e.getMessage());
    }
}
