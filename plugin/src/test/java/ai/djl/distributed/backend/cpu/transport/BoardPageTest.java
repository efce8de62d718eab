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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.nio.MappedByteBuffer;
import java.util.Set;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;

/** A board page's abort mark: of two threads racing to set it, one wins whole. */
@Timeout(60)
class BoardPageTest {

    @Test
    void racingAbortsKeepOneReasonWhole() throws Exception {
        String a = "a".repeat(700) + " the collective thread's reason";
        String b = "the aborting thread's reason, much shorter";
        CyclicBarrier start = new CyclicBarrier(2);
        for (int i = 0; i < 5_000; i++) {
            try (ShmSegments.Segment s =
                    ShmSegments.create("djl-dist-test-page", BoardPage.BYTES)) {
                MappedByteBuffer mapping = s.buffer();
                BoardPage page = new BoardPage(mapping);
                AtomicReference<Boolean> otherWon = new AtomicReference<>();
                Thread other =
                        new Thread(
                                () -> {
                                    try {
                                        start.await();
                                    } catch (Exception e) {
                                        throw new IllegalStateException(e);
                                    }
                                    otherWon.set(page.markAborted(b));
                                });
                other.start();
                start.await();
                boolean won = page.markAborted(a);
                other.join();
                assertTrue(won ^ otherWon.get(), "exactly one thread sets the mark");
                assertTrue(Set.of(a, b).contains(page.reason()), page.reason());
                assertEquals(won ? a : b, page.reason());
                assertFalse(page.markAborted("later"), "the mark is set once");
            }
        }
    }
}
