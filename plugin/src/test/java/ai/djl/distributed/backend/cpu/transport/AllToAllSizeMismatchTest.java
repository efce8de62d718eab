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
package ai.djl.distributed.backend.cpu.transport;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ai.djl.distributed.CommunicationException;
import ai.djl.distributed.testing.MultiRank;
import ai.djl.ndarray.NDArray;
import ai.djl.ndarray.types.DataType;
import ai.djl.ndarray.types.Shape;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;

/**
 * In {@code auto} mode a message goes over TCP up to 64 KiB and through shared memory above, each
 * side choosing by its own size. In an all-to-all the ranks of a pair may disagree on their
 * message's size, and its signature carries no sizes: one side that picks TCP and the other shared
 * memory must still be told of the mismatch at once, naming both sizes, as over TCP alone, rather
 * than wait out the group's timeout. Two ranks of one process, over both transports.
 */
@Timeout(120)
class AllToAllSizeMismatchTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(8);
    private static final int SMALL = 60 * 1024; // goes over TCP
    private static final int LARGE = 100 * 1024; // goes through shared memory

    /**
     * Rank 0 sends rank 1 {@code sent} bytes where rank 1 expects {@code SMALL + LARGE - sent}; one
     * float32 element each way otherwise. Rank 1 fails well before the timeout, naming both sizes.
     */
    @ParameterizedTest
    @ValueSource(ints = {SMALL, LARGE})
    void aSizeTheRanksDisagreeOnFailsAtOnce(int sent) throws Exception {
        int expected = SMALL + LARGE - sent;
        List<String> failures =
                MultiRank.run(
                        2,
                        "auto",
                        TIMEOUT,
                        (g, m) -> {
                            boolean zero = g.getRank() == 0;
                            long[] in = zero ? new long[] {1, sent / 4} : new long[] {1, 1};
                            long[] out = zero ? new long[] {1, 1} : new long[] {expected / 4, 1};
                            NDArray input = m.zeros(new Shape(in[0] + in[1]), DataType.FLOAT32);
                            NDArray output = m.zeros(new Shape(out[0] + out[1]), DataType.FLOAT32);
                            long start = System.nanoTime();
                            try {
                                g.allToAllSingle(output, input, out, in);
                            } catch (CommunicationException e) {
                                long ms = (System.nanoTime() - start) / 1_000_000;
                                return ms + " ms: " + e.getMessage();
                            }
                            return null;
                        });
        String one = failures.get(1);
        assertNotNull(one, "rank 1 completed the all-to-all");
        long ms = Long.parseLong(one.substring(0, one.indexOf(' ')));
        assertTrue(ms < TIMEOUT.toMillis() / 2, "rank 1 failed after " + one);
        assertTrue(one.contains("mismatch with rank 0"), one);
        assertTrue(one.contains("expecting " + expected + " bytes"), one);
        assertTrue(one.contains("sending " + sent + " bytes"), one);
        // Rank 0 may have received all it needed before rank 1 failed (then it keeps its result,
        // as over TCP alone); if not, it fails for rank 1's reason, not its own timeout.
        String zero = failures.get(0);
        assertTrue(zero == null || zero.contains("mismatch"), zero);
    }
}
